import { describe, expect, it } from "vitest";
import { titleFromMessage } from "../src/engine/thread-title.js";

describe("a new thread's default title, from its first message", () => {
  it("keeps the request and drops the polite opening and the rest of the message", () => {
    expect(titleFromMessage("Please review the diff in src/store.ts. Then tell me what breaks.")).toBe(
      "Review the diff in src/store.ts",
    );
    expect(titleFromMessage("can you please fix the flaky test?\nIt fails once in ten runs.")).toBe(
      "Fix the flaky test",
    );
    expect(titleFromMessage("Hey, I want you to add a --json flag to `threads list`")).toBe(
      "Add a --json flag to threads list",
    );
  });

  it("passes over headings, code, tags, markdown and a leading slash command", () => {
    const task = [
      "## Task",
      "",
      "```ts",
      "const x = 1;",
      "```",
      "- **Port** the [store](docs/store.md) to the async unit of work",
      "<context>ignored</context>",
    ].join("\n");
    expect(titleFromMessage(task)).toBe("Port the store to the async unit of work");
    expect(titleFromMessage("/review the open pull request")).toBe("Review the open pull request");
    expect(titleFromMessage("# Release checklist")).toBe("Release checklist");
  });

  it("cuts a long request at a word, within 60 characters, and says it did", () => {
    const title = titleFromMessage(
      "Rewrite the scheduler so that every recurring task is claimed through the outbox with a lease and an epoch",
    );
    expect(title).toBe("Rewrite the scheduler so that every recurring task is…");
    expect(title.length).toBeLessThanOrEqual(60);
    const unbroken = titleFromMessage("x".repeat(80));
    expect(unbroken).toBe(`X${"x".repeat(58)}…`);
  });

  it("falls back to the first line when nothing reads as prose, and to New thread when empty", () => {
    expect(titleFromMessage(null)).toBe("New thread");
    expect(titleFromMessage("   \n ")).toBe("New thread");
    expect(titleFromMessage("```\nnpm test\n```")).toBe("```");
    expect(titleFromMessage("Please.")).toBe("Please.");
  });

  it("leaves a short plain request as it is", () => {
    expect(titleFromMessage("@@gate live-1 @@reply parent-done")).toBe("@@gate live-1 @@reply parent-done");
    expect(titleFromMessage("clean the build @@approve rm -rf build")).toBe("Clean the build @@approve rm -rf build");
  });
});
