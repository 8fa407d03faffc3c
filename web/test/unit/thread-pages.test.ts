import { describe, expect, it } from "vitest";
import { MAX_THREAD_PAGES, THREAD_PAGE, threadPageOffsets } from "../../src/model/thread-pages.js";

describe("the pages the sidebar reads of a project", () => {
  it("asks for every page the project's count needs at once, one at least, up to the most it reads", () => {
    expect(threadPageOffsets(0)).toEqual([0]);
    expect(threadPageOffsets(THREAD_PAGE)).toEqual([0]);
    expect(threadPageOffsets(1_000)).toEqual([0]);
    expect(threadPageOffsets(1_001)).toEqual([0, 1_000]);
    expect(threadPageOffsets(1_000_000)).toHaveLength(MAX_THREAD_PAGES);
  });
});
