/**
 * Which rows of a long list of equal-height rows are in the page: those on screen, a screenful
 * either side (so a short scroll or a Tab to the next row finds it there), and never more than
 * the list holds. A list up to {@link WHOLE_LIST_ROWS} rows is in the page whole, as any list
 * is: find-in-page and the Tab order see every row of an ordinary project.
 */
export interface RowWindow {
  /** The first row in the page (0-based). */
  readonly first: number;
  /** One past the last row in the page. */
  readonly end: number;
}

/** The most rows a list puts in the page whole (about 20 ms of rendering on a quiet machine). */
export const WHOLE_LIST_ROWS = 200;

/** Rows the window grows or shrinks by, so a scroll of a few pixels renders nothing new. */
const STEP = 10;

export interface ListPlacement {
  /** How many rows the list holds. */
  readonly rows: number;
  /** One row's height in pixels (every row of the list is as high). */
  readonly rowHeight: number;
  /** Where the list's top is, in pixels from the top of the visible part of its scrolling box (negative once scrolled past). */
  readonly listTop: number;
  /** The height of the visible part of the scrolling box, in pixels. */
  readonly viewportHeight: number;
}

/** The rows to put in the page for a list placed so. */
export function rowWindow(placement: ListPlacement): RowWindow {
  const { rows, rowHeight, listTop, viewportHeight } = placement;
  if (rows <= WHOLE_LIST_ROWS || !(rowHeight > 0) || !(viewportHeight > 0)) return { first: 0, end: rows };
  const screenful = Math.ceil(viewportHeight / rowHeight);
  const firstOnScreen = Math.floor(-listTop / rowHeight);
  const first = Math.floor((firstOnScreen - screenful) / STEP) * STEP;
  const end = Math.ceil((firstOnScreen + 2 * screenful + 1) / STEP) * STEP;
  const clampedFirst = Math.min(Math.max(first, 0), rows);
  return { first: clampedFirst, end: Math.max(clampedFirst, Math.min(end, rows)) };
}

/** Whether two windows put the same rows in the page. */
export function sameWindow(a: RowWindow, b: RowWindow): boolean {
  return a.first === b.first && a.end === b.end;
}

/**
 * The rows on screen only, for a list placed so: what a list that just changed length puts in
 * the page first (windowed-list.tsx), the screenful either side following after the paint.
 */
export function rowsOnScreen(placement: ListPlacement): RowWindow {
  const { rows, rowHeight, listTop, viewportHeight } = placement;
  if (rows <= WHOLE_LIST_ROWS || !(rowHeight > 0) || !(viewportHeight > 0)) return { first: 0, end: rows };
  const first = Math.min(Math.max(Math.floor(-listTop / rowHeight), 0), rows);
  return { first, end: Math.min(Math.max(Math.ceil((viewportHeight - listTop) / rowHeight), first), rows) };
}

/** Whether the rows in the page hold every row of `wanted`. */
export function windowCovers(shown: RowWindow, wanted: RowWindow): boolean {
  return shown.first <= wanted.first && shown.end >= wanted.end;
}
