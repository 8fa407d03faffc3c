import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiClient, ok } from "../support/api-client.js";
import { untilGatesReached } from "../support/gates.js";
import { McpLab } from "../support/mcp-lab.js";
import { SseClient } from "../support/sse-client.js";

/**
 * What a person's client needs to show an agent's work as it happens: assistant text streamed
 * on the event stream before the message completes (liveOutput=true, never stored), tool calls
 * with their arguments, output, exit code and duration in a thread read, and the whole of what
 * a read cut short through the item read.
 */
describe("live output and tool-call items over the API", async () => {
  let lab: McpLab;
  let reader: ApiClient;
  let otherProjectToken: string;
  const streams: SseClient[] = [];
  const open = async (query: Record<string, string>, token = reader.token!) => {
    const stream = await SseClient.connect(`${lab.server.apiUrl}/events?${new URLSearchParams(query).toString()}`, {
      token,
    });
    streams.push(stream);
    return stream;
  };
  const start = async (prompt: string) =>
    (
      await lab.host.threads.createThread({
        projectId: lab.projectId,
        providerInstanceId: "alpha",
        runtimeMode: "full-access",
        prompt,
        createdBy: "user",
        creationSource: "cli",
      })
    ).thread.id;

  beforeAll(async () => {
    lab = await McpLab.start();
    reader = new ApiClient(
      lab.server.apiUrl,
      lab.registry.issueClientToken({ ttlMs: 3_600_000, capabilities: ["orchestration:read"] }).token,
    );
    const otherProject = (await lab.host.projects.add(mkdtempSync(join(tmpdir(), "switchyard-live-other-")), "other"))
      .id;
    otherProjectToken = lab.registry.issueClientToken({
      ttlMs: 3_600_000,
      capabilities: ["orchestration:read"],
      projects: [otherProject],
    }).token;
  });
  afterAll(async () => {
    for (const stream of streams) stream.close();
    await lab?.stop();
  });

  it("streams a reply's text as it arrives, without ids, to streams that ask and may read the thread; the completed message keeps its item id", async () => {
    const asking = await open({ liveOutput: "true" });
    const plain = await open({});
    const elsewhere = await open({ liveOutput: "true" }, otherProjectToken);
    const threadId = await start(
      "@@say Here is **the plan**: @@gate live-1 @@say 1. read @@gate live-2 @@reply 2. write",
    );
    await untilGatesReached(lab.t.gateDir, ["live-1"]);
    const first = await asking.waitFor((event) => event.type === "output.delta" && event.payload.threadId === threadId);
    expect(first.id).toBeUndefined();
    expect(first.payload).toMatchObject({
      type: "output.delta",
      projectId: lab.projectId,
      threadId,
      data: { kind: "assistant_message", offset: 0, delta: "Here is **the plan**:" },
    });
    const itemId = first.payload.data.itemId as string;
    // Nothing of it is stored yet: the thread has no assistant message.
    const before = await ok(reader.get(`/threads/${threadId}`, { view: "messages" }));
    expect(before.items.map((item: { role: string }) => item.role)).toEqual(["user"]);

    // A stream that opens now gets the text so far at once (it would wait for no next piece), then the pieces after it.
    const late = await open({ liveOutput: "true", threadId });
    const caughtUp = await late.waitFor((event) => event.type === "output.delta");
    expect(caughtUp.payload.data).toEqual({
      itemId,
      kind: "assistant_message",
      offset: 0,
      delta: "Here is **the plan**:",
    });
    lab.release("live-1");
    await untilGatesReached(lab.t.gateDir, ["live-2"]);
    const second = await asking.waitFor((event) => event.type === "output.delta" && event.payload.data.offset > 0);
    expect(second.payload.data).toEqual({
      itemId,
      kind: "assistant_message",
      offset: "Here is **the plan**:".length,
      delta: " 1. read",
    });
    // Streamed text is never written to the log: only the completed message will be.
    expect(
      lab.host.store
        .eventsAfter(0, 100_000)
        .filter((event) => JSON.stringify(event.record).includes("Here is **the plan**: 1. read")),
    ).toEqual([]);
    const lateNext = await late.waitFor((event) => event.type === "output.delta" && event.payload.data.offset > 0);
    expect(lateNext.payload.data).toEqual(second.payload.data);

    lab.release("live-2");
    const message = await asking.waitFor(
      (event) =>
        event.type === "message" && event.payload.data.item.role === "assistant" && event.payload.threadId === threadId,
    );
    expect(message.payload.data.item).toMatchObject({ itemId, text: "Here is **the plan**: 1. read 2. write" });
    // The log's ids carry on as before: the deltas took none.
    for (const event of asking.events)
      expect(event.id).toBe(event.type === "output.delta" ? undefined : String(event.payload.sequence));
    // Not asked for, or not the caller's project: no delta.
    await plain.waitFor(
      (event) =>
        event.type === "message" && event.payload.threadId === threadId && event.payload.data.item.role === "assistant",
    );
    expect(plain.events.filter((event) => event.type === "output.delta")).toEqual([]);
    expect(elsewhere.events.filter((event) => event.payload.threadId === threadId)).toEqual([]);
  });

  it("reads a command's arguments, output, exit code and duration, a file change's diff, and the whole of a long output through the item read", async () => {
    const threadId = await start(
      "@@shell printf 'line %s\\n' $(seq 1 400) @@shell echo broken >&2; exit 3 @@diff src/app.ts @@ -1,2 +1,2 @@\n-const a = 1;\n+const a = 2;\n const b = a; @@reply done",
    );
    await ok(reader.get(`/threads/${threadId}/wait`));
    const read = await ok(reader.get(`/threads/${threadId}`, { view: "activity", limit: 50 }));
    const tools = read.items.filter((item: { kind: string }) => item.kind === "tool_call");
    expect(
      tools.map((item: { text: string; status: string; details: Record<string, unknown> }) => [
        item.text,
        item.status,
        item.details.toolKind,
        item.details.exitCode,
      ]),
    ).toEqual([
      ["printf 'line %s\\n' $(seq 1 400)", "completed", "command", 0],
      ["echo broken >&2; exit 3", "failed", "command", 3],
      ["src/app.ts", "completed", "file_change", undefined],
    ]);
    const [long, failed, diff] = tools as { itemId: string; details: Record<string, any> }[];
    expect(long!.details.input).toEqual({ command: "printf 'line %s\\n' $(seq 1 400)", cwd: lab.t.workspace });
    expect(typeof long!.details.durationMs).toBe("number");
    expect(long!.details.durationMs).toBeGreaterThanOrEqual(0);
    expect(long!.details).toMatchObject({ outputTruncated: true, outputChars: expect.any(Number) });
    expect((long!.details.output as string).length).toBeLessThan(long!.details.outputChars);
    expect(failed!.details).toMatchObject({ output: "broken\n", outputTruncated: false, exitCode: 3 });
    expect(diff!.details.output).toBe("--- src/app.ts\n@@ -1,2 +1,2 @@\n-const a = 1;\n+const a = 2;\n const b = a;");

    // The whole output, a page at a time.
    const pages: string[] = [];
    for (let offset: number | null = 0; offset !== null;) {
      const page: { text: string; nextOffset: number | null } = await ok(
        reader.get(`/threads/${threadId}/items/${encodeURIComponent(long!.itemId)}`, {
          part: "output",
          offset,
          limit: 1000,
        }),
      );
      expect(page).toMatchObject({
        threadId,
        itemId: long!.itemId,
        kind: "tool_call",
        part: "output",
        totalChars: long!.details.outputChars,
      });
      pages.push(page.text);
      offset = page.nextOffset;
    }
    const stored = lab.host.store.get("item", long!.itemId)!.data.output as string;
    expect(pages.join("")).toBe(stored);
    expect(stored.startsWith("line 1\nline 2\n")).toBe(true);
    const input = await ok(
      reader.get(`/threads/${threadId}/items/${encodeURIComponent(long!.itemId)}`, { part: "input" }),
    );
    expect(JSON.parse(input.text)).toEqual(long!.details.input);

    // An item of no such thread, a bad part, another project's token (to which the thread does not exist): typed refusals.
    const missing = await reader.get(`/threads/${threadId}/items/item:nope`);
    expect([missing.status, missing.body.error.code, missing.body.error.details]).toEqual([
      404,
      "not_found",
      { threadId, itemId: "item:nope" },
    ]);
    const badPart = await reader.get(`/threads/${threadId}/items/${encodeURIComponent(long!.itemId)}`, {
      part: "secrets",
    });
    expect([badPart.status, badPart.body.error.code]).toEqual([400, "invalid_request"]);
    const theirs = await reader
      .with(otherProjectToken)
      .get(`/threads/${threadId}/items/${encodeURIComponent(long!.itemId)}`, { part: "output" });
    expect([theirs.status, theirs.body.error.code]).toEqual([404, "thread_not_found"]);
  });
});
