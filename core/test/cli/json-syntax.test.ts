import { describe, expect, it } from "vitest";
import { findJsonSyntaxProblem } from "../../src/config/json-syntax.js";

/** Whether JSON.parse accepts a text: the scanner must agree with it exactly. */
function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

const VALID = [
  "{}",
  "[]",
  " \n\t{ } \r\n",
  '{"a":1,"b":[true,false,null],"c":{"d":"e"}}',
  '"\\u00e9\\n\\t\\"\\\\\\/\\b\\f\\r"',
  "-0",
  "0.5e-10",
  "12E+3",
  "[1, -2.5, 3e2]",
  '{"providers":[{"id":"codex","driver":"codex","environment":{"KEY":"v"}}],"server":{"port":7410}}',
  '"ünïcödé ✓"',
];

const INVALID: [text: string, line: number, column: number, reason: RegExp][] = [
  ["", 1, 1, /ends where a value should be/],
  ["{", 1, 2, /property name/],
  ['{"a":1,}', 1, 8, /trailing commas/],
  ["[1,2,]", 1, 6, /trailing commas/],
  ["{'a':1}", 1, 2, /property name in double quotes/],
  ["{\"a\":'b'}", 1, 6, /double quotes, not single/],
  ['{"a" 1}', 1, 6, /":" after the property name/],
  ['{"a":1 "b":2}', 1, 8, /"," or "}"/],
  ["[1 2]", 1, 4, /"," or "]"/],
  ['{"a":tru}', 1, 9, /did you mean true/],
  ['{"a":01}', 1, 7, /"," or "}"/],
  ['{"a":1.}', 1, 8, /digits after "."/],
  ['{"a":1e}', 1, 8, /exponent/],
  ['{"a":-}', 1, 7, /needs digits/],
  ['{"a":"b', 1, 8, /not closed/],
  ['{"a":"b\nc"}', 1, 8, /not closed before the end of the line/],
  ['{"a":"\\x"}', 1, 7, /invalid escape/],
  ['{"a":"\\u12"}', 1, 7, /invalid escape/],
  ["{} {}", 1, 4, /after the end of the JSON value/],
  ['{\n  // a comment\n  "a": 1\n}', 2, 3, /property name|comments/],
  ["[// no\n]", 1, 2, /comments are not allowed/],
  ['{\n  "a": 1,\n  "b": [1, 2,,]\n}', 3, 14, /trailing|where a value/],
  ["\uFEFF{}", 1, 1, /where a value should be/],
];

describe("findJsonSyntaxProblem", () => {
  it("accepts exactly what JSON.parse accepts", () => {
    for (const text of VALID) {
      expect(parses(text), text).toBe(true);
      expect(findJsonSyntaxProblem(text), text).toBeNull();
    }
    for (const [text] of INVALID) {
      expect(parses(text), text).toBe(false);
      expect(findJsonSyntaxProblem(text), text).not.toBeNull();
    }
  });

  it("points at the line and column of the first mistake, and says what it is", () => {
    for (const [text, line, column, reason] of INVALID) {
      const problem = findJsonSyntaxProblem(text)!;
      expect({ text, line: problem.line, column: problem.column }).toEqual({ text, line, column });
      expect(problem.reason, text).toMatch(reason);
    }
  });
});
