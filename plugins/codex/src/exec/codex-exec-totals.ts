import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";

/** `codex exec`'s snake_case token counts (the SDK's `Usage`). */
export interface ExecTokenCounts {
  readonly input_tokens: number;
  readonly cached_input_tokens?: number;
  readonly cache_write_input_tokens?: number;
  readonly output_tokens: number;
  readonly reasoning_output_tokens?: number;
}

const FIGURES = [
  "input_tokens",
  "cached_input_tokens",
  "cache_write_input_tokens",
  "output_tokens",
  "reasoning_output_tokens",
] as const;

/** What a thread's total grew by since `before` (a figure the total does not have stays out). */
export function countsSince(total: ExecTokenCounts, before: ExecTokenCounts): ExecTokenCounts {
  const since: Record<string, number> = {};
  for (const figure of FIGURES) {
    const now = total[figure];
    if (typeof now === "number") since[figure] = Math.max(0, now - (before[figure] ?? 0));
  }
  return since as unknown as ExecTokenCounts;
}

export const NO_TOKENS: ExecTokenCounts = {
  input_tokens: 0,
  cached_input_tokens: 0,
  cache_write_input_tokens: 0,
  output_tokens: 0,
  reasoning_output_tokens: 0,
};

/** The rollout file Codex keeps for a thread (`sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl`), or null. */
async function findRollout(dir: string, suffix: string, depth = 0): Promise<string | null> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    if (entry.isFile() && entry.name.endsWith(suffix)) return join(dir, entry.name);
  }
  if (depth >= 3) return null;
  for (const entry of entries) {
    if (!entry.isDirectory()) continue;
    const found = await findRollout(join(dir, entry.name), suffix, depth + 1);
    if (found !== null) return found;
  }
  return null;
}

/**
 * The thread's running total as Codex last recorded it (its rollout's last `token_count`), or
 * null when there is no rollout or no count in it.
 */
export async function rolloutTotal(codexHome: string, threadId: string): Promise<ExecTokenCounts | null> {
  const file = await findRollout(join(codexHome, "sessions"), `-${threadId}.jsonl`);
  if (file === null) return null;
  const text = await readFile(file, "utf8").catch(() => "");
  let total: ExecTokenCounts | null = null;
  for (const line of text.split("\n")) {
    if (!line.includes('"token_count"')) continue;
    try {
      const event = JSON.parse(line) as {
        payload?: { type?: string; info?: { total_token_usage?: ExecTokenCounts } | null };
      };
      const counts = event.payload?.type === "token_count" ? event.payload.info?.total_token_usage : undefined;
      if (counts !== undefined && typeof counts.input_tokens === "number") total = counts;
    } catch {
      // A line cut off mid-write: the counts before it stand.
    }
  }
  return total;
}

/**
 * A Codex thread's token total, from turn to turn. `codex exec` reports at each turn's end the
 * whole thread's total (a resumed thread carries its history's), so a turn's usage is what the
 * total grew by. The total before a turn is the last turn's end; after a turn that did not end
 * with a count (interrupted, failed) or in a session reopened on an existing thread, it is read
 * from Codex's rollout. When that is not known either, the turn's usage is unknown, not the total.
 */
export class ExecThreadTotals {
  /** The thread's total before the running turn (null: unknown). */
  #before: ExecTokenCounts | null;
  /** True when #before is the total at the end of the last turn (no rollout read needed). */
  #current: boolean;

  constructor(
    private readonly codexHome: string,
    threadId: string | null,
  ) {
    this.#before = threadId === null ? NO_TOKENS : null;
    this.#current = threadId === null;
  }

  /** Before a turn of the thread (null: a new thread) starts. */
  async beforeTurn(threadId: string | null): Promise<void> {
    if (this.#current) return;
    if (threadId === null) {
      this.#before = NO_TOKENS;
    } else {
      this.#before = await rolloutTotal(this.codexHome, threadId);
    }
    this.#current = true;
  }

  /** A turn ended with this thread total: the turn's own counts, or null when unknown. */
  turnEnded(total: ExecTokenCounts): ExecTokenCounts | null {
    const before = this.#before;
    this.#before = total;
    this.#current = true;
    return before === null ? null : countsSince(total, before);
  }

  /** A turn ended without a count: the next turn's start reads the total again. */
  turnEndedUncounted(): void {
    this.#current = false;
  }
}
