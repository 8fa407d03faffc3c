import { describe, expect, it } from "vitest";
import { createProgressBar, renderProgressBar, type ProgressStream } from "../src/index.js";
import { redactSecrets } from "../src/redact.js";

function captureStream(isTTY: boolean): ProgressStream & { text: () => string } {
  const chunks: string[] = [];
  return { isTTY, write: (chunk: string) => chunks.push(chunk), text: () => chunks.join("") };
}

describe("progress rendering", () => {
  it("renders a bar with percentage and sizes, or a byte count when the size is unknown", () => {
    expect(renderProgressBar(5 * 1024 * 1024, 10 * 1024 * 1024, 10)).toBe("[#####-----]  50%  5.0/10.0 MiB");
    expect(renderProgressBar(10, 10, 4)).toBe("[####] 100%  0.0/0.0 MiB");
    expect(renderProgressBar(3 * 1024 * 1024, undefined)).toBe("3.0 MiB");
  });

  it("writes a line per quarter and per phase when the stream is not a terminal", () => {
    const stream = captureStream(false);
    const listener = createProgressBar(stream, { width: 4 });
    listener({ phase: "waiting_for_lock", agentId: "a" });
    for (let received = 0; received <= 100; received += 10)
      listener({ phase: "downloading", agentId: "a", receivedBytes: received, totalBytes: 100 });
    listener({ phase: "extracting", agentId: "a" });
    listener({ phase: "done", agentId: "a", alreadyInstalled: false });
    const lines = stream.text().trim().split("\n");
    expect(lines[0]).toBe("a: waiting for another install to finish");
    expect(lines.filter((line) => line.includes("downloading"))).toHaveLength(5);
    expect(lines.at(-2)).toBe("a: checking and extracting the archive");
    expect(lines.at(-1)).toBe("a: installed");
  });

  it("redraws one line in place on a terminal", () => {
    const stream = captureStream(true);
    const listener = createProgressBar(stream, { width: 4, intervalMs: 0 });
    listener({ phase: "downloading", agentId: "a", receivedBytes: 50, totalBytes: 100 });
    listener({ phase: "downloading", agentId: "a", receivedBytes: 100, totalBytes: 100 });
    listener({ phase: "done", agentId: "a", alreadyInstalled: false });
    expect(stream.text()).toBe(
      "\ra: downloading [##--]  50%  0.0/0.0 MiB\ra: downloading [####] 100%  0.0/0.0 MiB\na: installed\n",
    );
  });
});

describe("secret redaction in package-manager output", () => {
  it("masks credentials in URLs, auth tokens and bearer headers", () => {
    const text =
      "GET https://user:hunter2@registry.example.com/pkg\n//registry.example.com/:_authToken=npm_abc123\nAuthorization: Bearer eyJhbGciOi.x.y";
    const redacted = redactSecrets(text);
    expect(redacted).not.toMatch(/hunter2|npm_abc123|eyJhbGciOi/);
    expect(redacted).toContain("https://***@registry.example.com/pkg");
  });
});
