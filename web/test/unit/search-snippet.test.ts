import { describe, expect, it } from "vitest";
import { snippetPieces } from "../../src/model/search-snippet.js";

describe("a search snippet's pieces", () => {
  it("cuts the text at the matched ranges, keeping markup-like text as text", () => {
    expect(
      snippetPieces("<b>fix</b> the timezone bug, timezone again", [
        { start: 15, end: 23 },
        { start: 29, end: 37 },
      ]),
    ).toEqual([
      { text: "<b>fix</b> the ", matched: false },
      { text: "timezone", matched: true },
      { text: " bug, ", matched: false },
      { text: "timezone", matched: true },
      { text: " again", matched: false },
    ]);
  });

  it("skips ranges out of order, empty or past the end", () => {
    expect(
      snippetPieces("abc def", [
        { start: 4, end: 7 },
        { start: 0, end: 3 },
        { start: 5, end: 5 },
        { start: 6, end: 99 },
      ]),
    ).toEqual([
      { text: "abc ", matched: false },
      { text: "def", matched: true },
    ]);
  });
});
