import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ThreadEvent } from "@openai/codex-sdk";
import { describe, expect, it } from "vitest";
import type { AdapterEvent } from "@switchyard/sdk";
import { execChangesOf, type ExecEventContext } from "../src/exec/codex-exec-events.js";
import { CodexExecTurn } from "../src/exec/codex-exec-turn.js";
import { ExecThreadTotals } from "../src/exec/codex-exec-totals.js";
import { codexExecUsageOf } from "../src/shared/codex-usage.js";
import { grantFor } from "./codex-lab.js";

// The pure mapping of `@openai/codex-sdk` events (`codex exec --experimental-json`) to turn
// changes, and an exec turn on the kit's ledger turning them into adapter events. No process runs.

const grant = grantFor("http://127.0.0.1:1/mcp", "tok");

function context(texts: Record<string, string> = {}): ExecEventContext {
  return { hostTurnId: "host-turn", grant, messageText: (itemId) => texts[itemId] ?? "" };
}

describe("execChangesOf", () => {
  it("streams only the new text of a message the SDK reports whole, scoped to the host turn", () => {
    const update: ThreadEvent = {
      type: "item.updated",
      item: { id: "item_0", type: "agent_message", text: "Hello there" },
    };
    expect(execChangesOf(update, context({ "host-turn:item_0": "Hello" }))).toEqual([
      { type: "started" },
      { type: "message_delta", itemId: "host-turn:item_0", text: " there" },
      { type: "message_text", itemId: "host-turn:item_0", text: "Hello there" },
    ]);
    // A text that is not a continuation is sent whole.
    expect(execChangesOf(update, context({ "host-turn:item_0": "Bye" }))[1]).toMatchObject({
      type: "message_delta",
      text: "Hello there",
    });
    const done: ThreadEvent = {
      type: "item.completed",
      item: { id: "item_0", type: "agent_message", text: "Hello there" },
    };
    expect(execChangesOf(done, context({ "host-turn:item_0": "Hello there" }))).toEqual([
      { type: "started" },
      { type: "message_completed", itemId: "host-turn:item_0", text: "Hello there" },
    ]);
  });

  it("maps tool items: start on first sight, end when completed, MCP under the grant's server name", () => {
    const running: ThreadEvent = {
      type: "item.started",
      item: {
        id: "item_1",
        type: "command_execution",
        command: "/bin/bash -lc 'echo made'",
        aggregated_output: "",
        status: "in_progress",
      },
    };
    expect(execChangesOf(running, context())).toEqual([
      { type: "started" },
      {
        type: "tool_started",
        start: {
          itemId: "host-turn:item_1",
          kind: "command",
          name: "exec_command",
          title: "echo made",
          input: { command: "/bin/bash -lc 'echo made'" },
        },
      },
    ]);
    const finished: ThreadEvent = {
      type: "item.completed",
      item: {
        id: "item_1",
        type: "command_execution",
        command: "echo made",
        aggregated_output: "made\n",
        exit_code: 0,
        status: "completed",
      },
    };
    expect(execChangesOf(finished, context()).slice(2)).toEqual([
      { type: "tool_completed", itemId: "host-turn:item_1", status: "completed", output: "made\n" },
    ]);
    const mcp: ThreadEvent = {
      type: "item.completed",
      item: {
        id: "item_2",
        type: "mcp_tool_call",
        server: "switchyard-direct",
        tool: "t3_thread_wait",
        arguments: {},
        result: { content: [{ type: "text", text: "waited" }], structured_content: null },
        status: "completed",
      },
    };
    expect(execChangesOf(mcp, context()).slice(1)).toEqual([
      {
        type: "tool_started",
        start: {
          itemId: "host-turn:item_2",
          kind: "mcp",
          name: "mcp__switchyard__t3_thread_wait",
          title: "switchyard/t3_thread_wait",
          server: "switchyard",
          input: {},
        },
      },
      { type: "tool_completed", itemId: "host-turn:item_2", status: "completed", output: "waited" },
    ]);
  });

  it("maps the thread, reasoning, notices, errors and the end of the run", () => {
    expect(execChangesOf({ type: "thread.started", thread_id: "thr-1" }, context())).toEqual([
      { type: "thread", threadId: "thr-1" },
    ]);
    expect(
      execChangesOf({ type: "item.completed", item: { id: "r", type: "reasoning", text: "pondering" } }, context())[1],
    ).toEqual({ type: "reasoning_completed", itemId: "host-turn:r", text: "pondering" });
    expect(
      execChangesOf(
        { type: "item.completed", item: { id: "e", type: "error", message: "Model metadata not found" } },
        context(),
      )[1],
    ).toEqual({ type: "notice", message: "Model metadata not found" });
    expect(execChangesOf({ type: "item.updated", item: { id: "t", type: "todo_list", items: [] } }, context())).toEqual(
      [{ type: "started" }],
    );
    expect(execChangesOf({ type: "error", message: "stream broke" }, context())).toEqual([
      { type: "error", error: { code: "codex_error", message: "stream broke" } },
    ]);
    expect(execChangesOf({ type: "turn.failed", error: { message: "refused" } }, context())).toEqual([
      { type: "ended", status: "failed", error: { code: "turn_failed", message: "refused" } },
    ]);
    const usage = {
      input_tokens: 12,
      cached_input_tokens: 0,
      cache_write_input_tokens: 0,
      output_tokens: 3,
      reasoning_output_tokens: 0,
    };
    // codex exec reports the whole thread's total, not the turn's: the session takes the difference.
    expect(execChangesOf({ type: "turn.completed", usage }, context())).toEqual([
      { type: "thread_total", total: usage },
      { type: "ended", status: "completed" },
    ]);
    // Codex counts cached input inside input_tokens; the spec does not.
    const cached = {
      input_tokens: 12,
      cached_input_tokens: 5,
      cache_write_input_tokens: 0,
      output_tokens: 9,
      reasoning_output_tokens: 4,
    };
    expect(codexExecUsageOf(cached)).toEqual({
      inputTokens: 7,
      cacheReadInputTokens: 5,
      cacheCreationInputTokens: 0,
      outputTokens: 9,
      reasoningOutputTokens: 4,
    });
  });
});

describe("ExecThreadTotals: a turn's counts from the thread totals codex exec reports", () => {
  const counts = (input: number, cached: number, output: number) => ({
    input_tokens: input,
    cached_input_tokens: cached,
    cache_write_input_tokens: 0,
    output_tokens: output,
    reasoning_output_tokens: 0,
  });

  it("takes each turn's growth of the total; after a turn without a count, or in a reopened session, the total before comes from Codex's rollout", async () => {
    const home = await mkdtemp(join(tmpdir(), "codex-exec-totals-"));
    try {
      const fresh = new ExecThreadTotals(home, null);
      await fresh.beforeTurn(null);
      expect(fresh.turnEnded(counts(140, 40, 10))).toEqual(counts(140, 40, 10));
      await fresh.beforeTurn("thr-1");
      expect(fresh.turnEnded(counts(340, 40, 30))).toEqual(counts(200, 0, 20));

      // A session reopened on a thread with no rollout here: the turn's counts are unknown, not the total.
      const unknown = new ExecThreadTotals(home, "thr-2");
      await unknown.beforeTurn("thr-2");
      expect(unknown.turnEnded(counts(500, 0, 50))).toBeNull();

      // With a rollout: its last token_count is the total before (a line cut off mid-write is skipped).
      const day = join(home, "sessions", "2026", "12", "01");
      await mkdir(day, { recursive: true });
      const tokenCount = (total: ReturnType<typeof counts>) =>
        JSON.stringify({ type: "event_msg", payload: { type: "token_count", info: { total_token_usage: total } } });
      await writeFile(
        join(day, "rollout-2026-12-01T16-03-53-thr-3.jsonl"),
        [
          tokenCount(counts(140, 40, 10)),
          tokenCount(counts(340, 40, 30)),
          '{"type":"event_msg","payload":{"type":"token_c',
        ].join("\n"),
      );
      const reopened = new ExecThreadTotals(home, "thr-3");
      await reopened.beforeTurn("thr-3");
      expect(reopened.turnEnded(counts(640, 140, 60))).toEqual(counts(300, 100, 30));
      // An interrupted turn ended without a count: the next reads the rollout again.
      reopened.turnEndedUncounted();
      await reopened.beforeTurn("thr-3");
      expect(reopened.turnEnded(counts(700, 140, 70))).toEqual(counts(360, 100, 40));
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});

describe("CodexExecTurn (on the kit's turn ledger)", () => {
  function run(events: ThreadEvent[], end: (turn: CodexExecTurn) => void = (turn) => turn.finishRun()) {
    const emitted: AdapterEvent[] = [];
    const turn = new CodexExecTurn("host-turn", (event) => emitted.push(event));
    const ctx: ExecEventContext = { hostTurnId: "host-turn", grant, messageText: (itemId) => turn.messageText(itemId) };
    for (const event of events) {
      for (const change of execChangesOf(event, ctx))
        turn.apply(change.type === "thread_total" ? { type: "usage", usage: codexExecUsageOf(change.total) } : change);
    }
    end(turn);
    return emitted;
  }

  it("streams a whole-text message as deltas and ends with the run's usage", () => {
    const emitted = run([
      { type: "turn.started" },
      { type: "item.updated", item: { id: "item_0", type: "agent_message", text: "exec " } },
      { type: "item.updated", item: { id: "item_0", type: "agent_message", text: "exec says hello" } },
      { type: "item.completed", item: { id: "item_0", type: "agent_message", text: "exec says hello" } },
      {
        type: "turn.completed",
        usage: {
          input_tokens: 5,
          cached_input_tokens: 0,
          cache_write_input_tokens: 0,
          output_tokens: 2,
          reasoning_output_tokens: 0,
        },
      },
    ]);
    expect(emitted).toEqual([
      { type: "turn.started", turnId: "host-turn" },
      { type: "message.delta", turnId: "host-turn", itemId: "host-turn:item_0", text: "exec " },
      { type: "message.delta", turnId: "host-turn", itemId: "host-turn:item_0", text: "says hello" },
      { type: "message.completed", turnId: "host-turn", itemId: "host-turn:item_0", text: "exec says hello" },
      {
        type: "turn.terminal",
        turnId: "host-turn",
        status: "completed",
        usage: {
          inputTokens: 5,
          cacheReadInputTokens: 0,
          cacheCreationInputTokens: 0,
          outputTokens: 2,
          reasoningOutputTokens: 0,
        },
      },
    ]);
  });

  it("ends an aborted run interrupted with its tool failed, and a broken run with its last error", () => {
    const shell: ThreadEvent = {
      type: "item.started",
      item: {
        id: "item_1",
        type: "command_execution",
        command: "sleep 30",
        aggregated_output: "",
        status: "in_progress",
      },
    };
    const aborted = run([shell], (turn) => {
      turn.interruptRequested = true;
      turn.failRun(() => "aborted");
    });
    expect(aborted.slice(-2)).toEqual([
      { type: "tool_call.completed", turnId: "host-turn", itemId: "host-turn:item_1", status: "failed" },
      { type: "turn.terminal", turnId: "host-turn", status: "interrupted" },
    ]);
    const broken = run([{ type: "error", message: "stream broke" }], (turn) =>
      turn.failRun(() => "Codex Exec exited with code 1"),
    );
    expect(broken).toEqual([
      {
        type: "turn.terminal",
        turnId: "host-turn",
        status: "failed",
        error: { code: "codex_error", message: "stream broke" },
      },
    ]);
    const crashed = run([], (turn) => turn.failRun(() => "Codex Exec exited with code 1"));
    expect(crashed).toEqual([
      {
        type: "turn.terminal",
        turnId: "host-turn",
        status: "failed",
        error: { code: "codex_exec_failed", message: "Codex Exec exited with code 1" },
      },
    ]);
    // A run whose stream ended without a verdict after an error failed with it.
    expect(run([{ type: "error", message: "late" }]).at(-1)).toMatchObject({
      status: "failed",
      error: { message: "late" },
    });
  });
});
