import type { Command } from "commander";
import { InvalidArgumentError } from "commander";
import { parseDuration } from "../duration.js";
import { printJson } from "../output.js";
import { withServer, type CommandAccess } from "../server-api.js";
import { threadIdOf } from "../thread-arguments.js";

const OPERATE: CommandAccess = {
  verbs: ["orchestration:read", "orchestration:operate"],
  command: "switchyard threads",
};

interface SnoozeResult {
  thread: { threadId: string; snoozed: boolean; snoozedUntil: string | null };
  changed: boolean;
}

/**
 * `--until`: a duration from now (2h, 1d) or an ISO-8601 time (2026-12-08T09:00:00Z, or with an
 * offset). The server refuses a time that is not in the future.
 */
export function parseSnoozeUntil(value: string, nowMs: number = Date.now()): string {
  const text = value.trim();
  if (/^\d+\s*[smhdw]?$/.test(text)) return new Date(nowMs + parseDuration(text)).toISOString();
  if (!/^\d{4}-\d{2}-\d{2}T/.test(text) || Number.isNaN(Date.parse(text)))
    throw new InvalidArgumentError(
      `"${value}" is neither a duration (30m, 2h, 1d) nor an ISO-8601 time (2026-12-08T09:00:00Z).`,
    );
  return text;
}

export function registerThreadSnooze(threads: Command): void {
  threads
    .command("snooze <thread>")
    .description(
      "Snooze a thread until a time: it leaves the active list until then, or until it asks for something or a run fails",
    )
    .requiredOption("--until <time|duration>", "a duration from now (30m, 2h, 1d) or an ISO-8601 time", (value) =>
      parseSnoozeUntil(value),
    )
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(async (thread: string, options: { until: string; home?: string; json?: boolean }) => {
      await withServer(options, OPERATE, async (api, host) => {
        const threadId = threadIdOf(host, thread);
        const result = await api.call<SnoozeResult>("POST", `/threads/${encodeURIComponent(threadId)}/snooze`, {
          until: options.until,
        });
        if (options.json) printJson(result);
        else process.stdout.write(`Snoozed ${threadId} until ${result.thread.snoozedUntil}.\n`);
      });
    });

  threads
    .command("unsnooze <thread>")
    .description("Wake a snoozed thread now")
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(async (thread: string, options: { home?: string; json?: boolean }) => {
      await withServer(options, OPERATE, async (api, host) => {
        const threadId = threadIdOf(host, thread);
        const result = await api.call<SnoozeResult>("POST", `/threads/${encodeURIComponent(threadId)}/unsnooze`, {});
        if (options.json) printJson(result);
        else process.stdout.write(result.changed ? `Woke ${threadId}.\n` : `${threadId} was not snoozed.\n`);
      });
    });
}
