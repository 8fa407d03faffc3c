/**
 * How many threads of a project the sidebar reads a page at a time: the API's longest page of
 * rows (GET /threads?view=row), so a project of a thousand threads is one request. Ten pages of
 * a hundred cost ten requests' turns on a loaded server, most of the first render's wait.
 */
export const THREAD_PAGE = 1_000;

/** The most pages of one project the sidebar reads (its newest 2,000 threads). */
export const MAX_THREAD_PAGES = 2;

/**
 * The offsets of the pages that read a project of `threadCount` threads (as the project list
 * counts them), all asked for at once: one page at least (a thread made since the count is on
 * it), up to {@link MAX_THREAD_PAGES}.
 */
export function threadPageOffsets(threadCount: number): number[] {
  const pages = Math.min(MAX_THREAD_PAGES, Math.max(1, Math.ceil(threadCount / THREAD_PAGE)));
  return Array.from({ length: pages }, (_, index) => index * THREAD_PAGE);
}
