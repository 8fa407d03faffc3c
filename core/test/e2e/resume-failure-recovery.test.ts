import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPiHome, ScriptedModelServer } from "@switchyard/testkit";
import { runCli } from "../support/cli.js";
import { connectMcp, mustCall } from "../support/mcp-client.js";
import { readRow, ServeProcess, waitForRow, writeHomeConfig } from "../support/serve-process.js";

const PI_PLUGIN = fileURLToPath(new URL("../../../plugins/pi", import.meta.url));

interface RunView {
  readonly runId: string;
  readonly status: string;
  readonly error: { code?: string; message: string } | null;
  readonly ordinal: number;
  readonly sessionContinuation: { asked: string; action: string; degraded: boolean; reason: string } | null;
}

interface ReadResult {
  readonly runs: RunView[];
  readonly items: { kind: string; text: string; details: Record<string, unknown> }[];
}

// A thread whose provider conversation cannot be reopened (its Pi session file deleted or
// corrupted after the session closed or the server was killed) goes on in a new Pi session that
// is handed the thread's history, and says so; it does not fail every later turn. Real `serve`,
// real Pi, the scripted model server.
describe("a thread whose provider conversation is gone (real Pi, scripted model)", () => {
  const cleanups: (() => Promise<unknown> | unknown)[] = [];
  let model: ScriptedModelServer;
  let home: string;
  let projectId: string;
  let token: string;
  let server: ServeProcess;
  let client: Client;

  beforeAll(async () => {
    model = await ScriptedModelServer.start();
    cleanups.push(() => model.close());
    const piHome = await createPiHome({ modelServerUrl: model.url });
    cleanups.push(() => piHome.cleanup());
    home = mkdtempSync(join(tmpdir(), "switchyard-e2e-resume-failure-"));
    const workspace = mkdtempSync(join(tmpdir(), "switchyard-e2e-resume-failure-ws-"));
    cleanups.push(
      () => rmSync(home, { recursive: true, force: true }),
      () => rmSync(workspace, { recursive: true, force: true }),
    );
    // Sessions close a second after their turn, so the next turn has to reopen the conversation.
    writeHomeConfig(home, {
      plugins: [PI_PLUGIN],
      providers: [{ id: "pi", driver: "pi", homePath: piHome.home, environment: piHome.env }],
      server: { sessionIdleMs: 1_000 },
    });
    projectId = (
      JSON.parse((await runCli(["project", "add", workspace, "--json", "--home", home])).stdout) as { id: string }
    ).id;
    token = (JSON.parse((await runCli(["token", "issue", "--json", "--home", home])).stdout) as { token: string })
      .token;
    server = ServeProcess.start(home);
    cleanups.push(() => server.kill9());
    client = await connectMcp((await server.ready).mcpUrl, token);
    cleanups.push(() => client.close());
  }, 120_000);

  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  }, 60_000);

  async function firstTurn(word: string): Promise<string> {
    const created = await mustCall<{ threads: { thread: { threadId: string } }[] }>(client, "create_threads", {
      projectId,
      threads: [
        { title: word, prompt: `Remember the code word ${word}. @@reply Noted.`, target: { providerInstanceId: "pi" } },
      ],
    });
    const threadId = created.threads[0]!.thread.threadId;
    await finished(threadId, 1);
    return threadId;
  }

  async function finished(threadId: string, ordinal: number): Promise<string> {
    const row = await waitForRow<{ status: string }>(
      home,
      "SELECT json_extract(data, '$.status') AS status FROM runs WHERE thread_id = ? AND json_extract(data, '$.ordinal') = ? AND json_extract(data, '$.status') IN ('completed', 'failed', 'interrupted', 'cancelled')",
      [threadId, ordinal],
      120_000,
    );
    return row.status;
  }

  /** The Pi session file the thread's closed session left to resume. */
  async function closedSessionFile(threadId: string): Promise<string> {
    const row = await waitForRow<{ cursor: string }>(
      home,
      "SELECT json_extract(data, '$.resumeCursor') AS cursor FROM provider_sessions WHERE thread_id = ? AND status = 'closed' AND json_extract(data, '$.resumeCursor') IS NOT NULL",
      [threadId],
      30_000,
    );
    return row.cursor;
  }

  /** Asks the thread for its word and checks that the new Pi session was handed it, and said so. */
  async function askAgain(threadId: string, word: string, ordinal: number): Promise<void> {
    const before = model.requests.length;
    await mustCall(client, "t3_thread_send", { threadId, message: "What was the code word? @@reply I remember it." });
    expect(await finished(threadId, ordinal)).toBe("completed");
    const asked = model.requests
      .slice(before)
      .filter((request) => !request.sideCall && (request.userText ?? "").includes("What was the code word?"));
    expect(asked.length).toBeGreaterThan(0);
    // A new conversation: the word reached the model only through the handed-over history.
    expect(JSON.stringify(asked[0]!.body)).toContain(`Remember the code word ${word}`);

    const read = await mustCall<ReadResult>(client, "t3_thread_read", { threadId, view: "activity" });
    const run = read.runs.find(
      (candidate) =>
        candidate.status === "completed" &&
        candidate.sessionContinuation !== null &&
        candidate.sessionContinuation.action === "handoff",
    )!;
    expect(run.sessionContinuation).toMatchObject({ asked: "resume", action: "handoff", degraded: true });
    expect(run.sessionContinuation!.reason).toMatch(
      /^The provider could not reopen the thread's conversation \(.+\), so a new provider session got the thread's history as portable context\.$/,
    );
    const handoff = read.items.filter((item) => item.kind === "handoff").at(-1)!;
    expect(handoff.details).toMatchObject({
      strategy: "portable",
      degraded: true,
      reason: run.sessionContinuation!.reason,
    });
  }

  it("goes on with a new Pi session and the thread's history when the session file was deleted, and keeps going on it", async () => {
    const threadId = await firstTurn("ZEBRA-41");
    rmSync(await closedSessionFile(threadId));
    await askAgain(threadId, "ZEBRA-41", 2);
    const reason = readRow<{ reason: string }>(
      home,
      "SELECT json_extract(data, '$.resumeFailure') AS reason FROM provider_sessions WHERE thread_id = ? AND json_extract(data, '$.resumeFailure') IS NOT NULL",
      [threadId],
    );
    expect(reason?.reason).toContain("no longer exists");

    // The new session's own conversation is the one reopened from now on: no handoff again.
    await waitForRow(
      home,
      "SELECT 1 FROM provider_sessions WHERE thread_id = ? AND status = 'closed' AND json_extract(data, '$.resumeFailure') IS NOT NULL",
      [threadId],
      30_000,
    );
    await mustCall(client, "t3_thread_send", { threadId, message: "And now? @@reply Still here." });
    expect(await finished(threadId, 3)).toBe("completed");
    const read = await mustCall<ReadResult>(client, "t3_thread_read", { threadId });
    // Reads show a continuation only when it was degraded; the run record keeps every decision.
    expect(read.runs.find((run) => run.ordinal === 3)).toMatchObject({
      status: "completed",
      sessionContinuation: null,
    });
    const third = readRow<{ action: string; degraded: number }>(
      home,
      "SELECT json_extract(data, '$.sessionContinuation.action') AS action, json_extract(data, '$.sessionContinuation.degraded') AS degraded FROM runs WHERE thread_id = ? AND json_extract(data, '$.ordinal') = 3",
      [threadId],
    );
    expect(third).toEqual({ action: "resume", degraded: 0 });
  }, 300_000);

  it("goes on after a kill -9 and a restart when the session file was corrupted meanwhile", async () => {
    const threadId = await firstTurn("OTTER-7");
    const file = await closedSessionFile(threadId);
    await server.kill9();
    writeFileSync(file, "{ this is not a session file\n");
    server = ServeProcess.start(home);
    await client.close();
    client = await connectMcp((await server.ready).mcpUrl, token);
    await askAgain(threadId, "OTTER-7", 2);
  }, 300_000);
});
