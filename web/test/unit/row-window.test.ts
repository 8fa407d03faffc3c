import { describe, expect, it } from "vitest";
import { rowsOnScreen, rowWindow, sameWindow, windowCovers, WHOLE_LIST_ROWS } from "../../src/model/row-window.js";

describe("the rows a long list puts in the page", () => {
  const list = { rows: 1_000, rowHeight: 50, viewportHeight: 500 };

  it("puts an ordinary list in the page whole, wherever it is", () => {
    expect(rowWindow({ ...list, rows: WHOLE_LIST_ROWS, listTop: -5_000 })).toEqual({ first: 0, end: WHOLE_LIST_ROWS });
    expect(rowWindow({ ...list, rows: 0, listTop: 0 })).toEqual({ first: 0, end: 0 });
  });

  it("puts a screenful either side of the rows on screen, in steps of ten rows", () => {
    // At the top: rows 0-9 on screen, a screenful below.
    expect(rowWindow({ ...list, listTop: 0 })).toEqual({ first: 0, end: 30 });
    // Scrolled to row 400 (the list's top 20,000 px above the box's).
    const middle = rowWindow({ ...list, listTop: -20_000 });
    expect(middle).toEqual({ first: 390, end: 430 });
    expect(middle.first).toBeLessThanOrEqual(400 - 10);
    expect(middle.end).toBeGreaterThanOrEqual(400 + 10 + 10);
    // A few pixels further changes nothing, so a slow scroll renders nothing new.
    expect(sameWindow(rowWindow({ ...list, listTop: -20_030 }), middle)).toBe(true);
  });

  it("reaches the last row at the bottom, and holds none of a list far off screen", () => {
    expect(rowWindow({ ...list, listTop: -(1_000 * 50 - 500) })).toEqual({ first: 980, end: 1_000 });
    expect(rowWindow({ ...list, listTop: 5_000 })).toEqual({ first: 0, end: 0 });
    expect(rowWindow({ ...list, listTop: -60_000 })).toEqual({ first: 1_000, end: 1_000 });
  });

  it("puts the list in whole until a row or the box has a height", () => {
    expect(rowWindow({ ...list, rowHeight: 0, listTop: 0 })).toEqual({ first: 0, end: 1_000 });
    expect(rowWindow({ ...list, viewportHeight: 0, listTop: 0 })).toEqual({ first: 0, end: 1_000 });
  });

  it("puts only the rows on screen in a list's first render, which the full window covers", () => {
    // The list's top 150 px down the box: rows 0-6 on screen (a 500 px box of 50 px rows).
    const onScreen = rowsOnScreen({ ...list, listTop: 150 });
    expect(onScreen).toEqual({ first: 0, end: 7 });
    expect(windowCovers(rowWindow({ ...list, listTop: 150 }), onScreen)).toBe(true);
    // Scrolled to row 400: rows 400-409.
    expect(rowsOnScreen({ ...list, listTop: -20_000 })).toEqual({ first: 400, end: 410 });
    expect(rowsOnScreen({ ...list, rows: WHOLE_LIST_ROWS, listTop: 0 })).toEqual({ first: 0, end: WHOLE_LIST_ROWS });
    expect(windowCovers({ first: 0, end: 6 }, onScreen)).toBe(false);
    expect(windowCovers({ first: 1, end: 30 }, onScreen)).toBe(false);
  });
});
