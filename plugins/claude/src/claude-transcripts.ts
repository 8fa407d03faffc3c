import { fileURLToPath } from "node:url";
import { SwitchyardError, type ProcessHelpers, type SnapshotTurn, type ThreadSnapshot } from "@switchyard/sdk";
import {
  contentBlocks,
  isTextBlock,
  isToolResultBlock,
  INTERRUPT_MARKER,
  type ForkSessionResult,
  type SessionMessage,
} from "./claude-wire.js";

// Beside src/ and dist/, so the same path works from both.
const TOOL = fileURLToPath(new URL("../bin/claude-transcript-tool.mjs", import.meta.url));
const TOOL_TIMEOUT_MS = 30_000;

/** Reads and copies the transcripts of one Claude instance (its `CLAUDE_CONFIG_DIR`). */
export class ClaudeTranscripts {
  constructor(
    private readonly helpers: ProcessHelpers,
    /** The instance's complete harness environment (it names `CLAUDE_CONFIG_DIR`). */
    private readonly env: Readonly<Record<string, string>>,
    /** The SDK's entry module where the user installed it (the tool imports it from there), or null: the tool's own resolution. */
    private readonly sdkEntry: () => Promise<string | null> = async () => null,
  ) {}

  private async run<T>(operation: "fork" | "messages", sessionId: string, projectDir: string): Promise<T> {
    const entry = await this.sdkEntry();
    const result = await this.helpers.run(
      process.execPath,
      [TOOL, operation, sessionId, projectDir, ...(entry !== null ? [entry] : [])],
      {
        cwd: projectDir,
        env: this.env,
        extendEnv: false,
        label: `claude transcript ${operation}`,
        timeoutMs: TOOL_TIMEOUT_MS,
      },
    );
    if (result.failed || result.exitCode !== 0) {
      const reason = result.stderr.trim().slice(-600) || `exit code ${result.exitCode ?? "none"}`;
      const code = /not found/i.test(reason) ? "not_found" : "provider_error";
      throw new SwitchyardError(code, `Reading Claude session "${sessionId}" failed: ${reason}`, {
        sessionId,
        operation,
      });
    }
    return JSON.parse(result.stdout.trim().split("\n").at(-1) ?? "null") as T;
  }

  /** Copies a session's whole transcript into a new session (the SDK's `forkSession`); returns its id. */
  async fork(sessionId: string, projectDir: string): Promise<string> {
    const result = await this.run<ForkSessionResult>("fork", sessionId, projectDir);
    if (typeof result?.sessionId !== "string")
      throw new SwitchyardError("provider_error", `forkSession returned no session id for "${sessionId}".`, {
        sessionId,
      });
    return result.sessionId;
  }

  /** The conversation as the transcript holds it: one entry per user prompt, with the last reply to it. */
  async snapshot(sessionId: string, projectDir: string): Promise<ThreadSnapshot> {
    return snapshotOf(await this.run<SessionMessage[]>("messages", sessionId, projectDir));
  }
}

/** Turns transcript messages into snapshot turns (tool results and interrupt markers are not prompts). */
export function snapshotOf(messages: readonly SessionMessage[]): ThreadSnapshot {
  const turns: SnapshotTurn[] = [];
  for (const entry of messages) {
    if (entry.parent_tool_use_id !== null) continue;
    const blocks = contentBlocks((entry.message as { content?: unknown } | null)?.content);
    const text = blocks
      .filter(isTextBlock)
      .map((block) => block.text)
      .filter((line) => !line.startsWith(INTERRUPT_MARKER))
      .join("\n")
      .trim();
    if (entry.type === "user") {
      if (blocks.some(isToolResultBlock) || text === "") continue;
      turns.push({ userText: text, assistantText: "" });
    } else if (entry.type === "assistant" && text !== "") {
      const current = turns.at(-1);
      if (current !== undefined) turns[turns.length - 1] = { ...current, assistantText: text };
    }
  }
  return { turns };
}
