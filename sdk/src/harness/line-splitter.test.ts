import { describe, expect, it } from "vitest";
import { LineSplitter } from "./line-splitter.js";

describe("LineSplitter", () => {
  it("keeps a multi-byte character split across chunks, splits on \\n only, trims \\r", () => {
    const splitter = new LineSplitter();
    const bytes = Buffer.from('{"t":"é\u2028x"}\r\nnext', "utf8");
    const cut = bytes.indexOf(0xa9); // inside the two bytes of "é"
    expect(splitter.push(bytes.subarray(0, cut))).toEqual([]);
    expect(splitter.push(bytes.subarray(cut))).toEqual(['{"t":"é\u2028x"}']);
    expect(splitter.flush()).toEqual(["next"]);
  });
});
