import type { JSX, RefObject } from "preact";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import {
  rowsOnScreen,
  rowWindow,
  sameWindow,
  windowCovers,
  WHOLE_LIST_ROWS,
  type RowWindow,
} from "../model/row-window.js";

/** Where a row sits in its list, for assistive technology when the page holds only some rows. */
export interface RowPlace {
  /** 1-based, as aria-posinset counts. */
  readonly position: number;
  readonly of: number;
}

/** A row's height before one is measured (a sidebar row is 3.4rem of 15px). */
const ROW_HEIGHT_GUESS = 51;

/**
 * A list of equal-height rows that puts in the page only those near the screen (see
 * row-window.ts), the rest standing as padding of the same height, so the scrollbar, scrolling
 * and a project of a thousand threads behave as if every row were there. The rows are laid out
 * by `render`, each an `<li>` that carries its {@link RowPlace} when the list is windowed.
 */
export function WindowedList<T>(props: {
  readonly items: readonly T[];
  readonly render: (item: T, place: RowPlace | null) => JSX.Element;
  /** The scrolling box the list sits in. */
  readonly viewport: RefObject<HTMLElement | null>;
  readonly class: string;
  readonly id?: string;
  readonly label?: string;
  /** What the list says when it holds no rows. */
  readonly empty?: JSX.Element;
}) {
  const list = useRef<HTMLUListElement>(null);
  const rowHeight = useRef(ROW_HEIGHT_GUESS);
  /** Where the list and its scrolling box were at the last placement (before one: the top of a window-high box). */
  const lastPlacement = useRef({ listTop: 0, viewportHeight: innerHeight });
  const rows = props.items.length;
  /**
   * The rows on screen for a list this long, placed as last time: a list that changed length
   * (its threads read, one added) renders these at once, not empty or short and then again.
   */
  const guess = (): RowWindow & { readonly rows: number } => ({
    ...rowsOnScreen({ rows, rowHeight: rowHeight.current, ...lastPlacement.current }),
    rows,
  });
  const [placed, setShown] = useState(guess);
  /** Whether the rows in the page are a guess the paint comes before the full window (a screenful either side). */
  const guessed = useRef(true);
  if (placed.rows !== rows) guessed.current = true;
  const shown = placed.rows === rows ? placed : guess();
  const current = useRef<RowWindow>(shown);
  current.current = shown;

  /** Moves the window to where the list is now; called after a render, a scroll or a resize. */
  const place = useRef(() => {});
  place.current = () => {
    const element = list.current;
    const viewport = props.viewport.current;
    // A whole list reads no layout, on a scroll either.
    if (element === null || viewport === null || rows <= WHOLE_LIST_ROWS) return;
    const row = element.querySelector<HTMLElement>(":scope > li");
    const measured = row?.getBoundingClientRect().height ?? 0;
    if (measured > 0) rowHeight.current = measured;
    lastPlacement.current = {
      listTop: element.getBoundingClientRect().top - viewport.getBoundingClientRect().top,
      viewportHeight: viewport.clientHeight,
    };
    const next = rowWindow({ rows, rowHeight: rowHeight.current, ...lastPlacement.current });
    // A guess that holds the rows on screen stays until the paint; the window then grows (below).
    if (
      guessed.current &&
      windowCovers(current.current, rowsOnScreen({ rows, rowHeight: rowHeight.current, ...lastPlacement.current }))
    )
      return;
    if (!sameWindow(next, current.current) || placed.rows !== rows) setShown({ ...next, rows });
  };

  // After every render, before the paint: the list's rows or what is above it may have changed.
  useLayoutEffect(() => {
    if (rows > WHOLE_LIST_ROWS) place.current();
    else if (!sameWindow(current.current, { first: 0, end: rows })) setShown({ first: 0, end: rows, rows });
  });

  // After the paint: rows guessed for a new length get their screenful either side.
  useEffect(() => {
    if (!guessed.current) return;
    guessed.current = false;
    if (rows > WHOLE_LIST_ROWS) place.current();
  });

  useEffect(() => {
    const viewport = props.viewport.current;
    if (viewport === null) return;
    const onChange = () => place.current();
    viewport.addEventListener("scroll", onChange, { passive: true });
    const resizes = new ResizeObserver(onChange);
    resizes.observe(viewport);
    return () => {
      viewport.removeEventListener("scroll", onChange);
      resizes.disconnect();
    };
  }, [props.viewport]);

  // Until the layout effect places a list that changed length, the window is kept within it.
  const first = Math.min(shown.first, rows);
  const end = Math.min(Math.max(shown.end, first), rows);
  const windowed = first > 0 || end < rows;
  const height = rowHeight.current;
  return (
    <ul
      ref={list}
      id={props.id}
      class={props.class}
      aria-label={props.label}
      data-rows={rows}
      // Set through the DOM (the page's CSP allows no style attributes, and Preact writes these as properties).
      style={windowed ? { paddingTop: `${first * height}px`, paddingBottom: `${(rows - end) * height}px` } : undefined}
    >
      {rows === 0
        ? props.empty
        : props.items
            .slice(first, end)
            .map((item, index) => props.render(item, windowed ? { position: first + index + 1, of: rows } : null))}
    </ul>
  );
}
