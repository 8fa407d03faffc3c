/** How many threads of a project the sidebar reads a page at a time (the API's largest page). */
export const THREAD_PAGE = 100;

/** The most pages of one project the sidebar reads (its newest 2,000 threads). */
export const MAX_THREAD_PAGES = 20;

/**
 * The offsets of the pages that read a project of `threadCount` threads (as the project list
 * counts them), all asked for at once: one page at least (a thread made since the count is on
 * it), up to {@link MAX_THREAD_PAGES}.
 */
export function threadPageOffsets(threadCount: number): number[] {
  const pages = Math.min(MAX_THREAD_PAGES, Math.max(1, Math.ceil(threadCount / THREAD_PAGE)));
  return Array.from({ length: pages }, (_, index) => index * THREAD_PAGE);
}
