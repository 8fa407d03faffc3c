import { describe, expect, it } from "vitest";
import { webPageOf } from "../../src/services/reach/remote-web-page.js";

describe("a linked environment's web page for its child", () => {
  it("is kept when it is a plain http(s) URL", () => {
    expect(webPageOf("http://127.0.0.1:7410/threads/thread:abc")).toEqual({
      childThreadWebUrl: "http://127.0.0.1:7410/threads/thread:abc",
    });
    expect(webPageOf("https://mac.example/ui/threads/t1")).toEqual({
      childThreadWebUrl: "https://mac.example/ui/threads/t1",
    });
  });

  it("is dropped when it could run code, carries credentials, or is not a URL", () => {
    for (const value of [
      "javascript:alert(1)",
      "data:text/html,<script>alert(1)</script>",
      "https://user:secret@mac.example/threads/t1",
      "not a url",
      `https://mac.example/${"x".repeat(3_000)}`,
      42,
      undefined,
    ])
      expect(webPageOf(value)).toEqual({});
  });
});
