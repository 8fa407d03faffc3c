import { InvalidArgumentError, type Command } from "commander";
import { MAX_AUDIT_LIMIT, ReachAudit, type ReachAuditDirection } from "../../services/reach/reach-audit.js";
import { parseDuration } from "../duration.js";
import { withHost } from "../open-host.js";
import { printJson, printTable, style } from "../output.js";

/** `--since`: a duration back from now (`2h`, `7d`) or an ISO 8601 instant. */
function parseSince(value: string): number {
  if (/^\d{4}-\d{2}-\d{2}/.test(value.trim())) {
    const at = Date.parse(value);
    if (Number.isNaN(at))
      throw new InvalidArgumentError(`--since: "${value}" is not an ISO 8601 instant (e.g. 2026-12-01T09:00:00Z).`);
    return at;
  }
  try {
    return Date.now() - parseDuration(value);
  } catch (error) {
    if (error instanceof InvalidArgumentError)
      throw new InvalidArgumentError(
        `--since takes a duration back from now or an ISO 8601 instant (2026-12-01T09:00:00Z): ${error.message}`,
      );
    throw error;
  }
}

function parseLimit(value: string): number {
  const limit = Number(value);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_AUDIT_LIMIT)
    throw new InvalidArgumentError(`--limit takes a whole number from 1 to ${MAX_AUDIT_LIMIT}, not "${value}".`);
  return limit;
}

function parseDirection(value: string): ReachAuditDirection {
  if (value !== "in" && value !== "out")
    throw new InvalidArgumentError(
      `--direction is "in" (calls other environments made here) or "out" (calls made through links), not "${value}".`,
    );
  return value;
}

export function registerAudit(program: Command): void {
  program
    .command("audit")
    .description(
      "Calls across environments, newest first: the ones linked environments made here (grant, caller, verb, tool, target, outcome) and the ones made through links",
    )
    .option("--since <when>", "only calls since a duration ago (2h, 7d) or an ISO 8601 instant")
    .option("--limit <n>", `at most this many rows (default 100, at most ${MAX_AUDIT_LIMIT})`, parseLimit)
    .option("--direction <in|out>", "only calls made here (in) or through links (out)", parseDirection)
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(
      async (options: {
        since?: string;
        limit?: number;
        direction?: ReachAuditDirection;
        home?: string;
        json?: boolean;
      }) => {
        // Parsed here rather than by commander, so "2h" means two hours before the command ran.
        const sinceMs = options.since === undefined ? undefined : parseSince(options.since);
        await withHost(options, async (host) => {
          const entries = await host.container.resolve(ReachAudit).list({
            ...(sinceMs !== undefined ? { sinceMs } : {}),
            ...(options.limit !== undefined ? { limit: options.limit } : {}),
            ...(options.direction !== undefined ? { direction: options.direction } : {}),
          });
          if (options.json) printJson(entries);
          else if (entries.length === 0) process.stdout.write("No calls across environments recorded.\n");
          else
            printTable(
              ["AT", "DIR", "ENVIRONMENT", "GRANT", "CALLER THREAD", "VERB", "TOOL", "TARGET", "OUTCOME"],
              entries.map((e) => [
                e.at,
                e.direction,
                e.environment ?? "",
                e.grantId ?? "",
                e.callerThreadId ?? "",
                e.verb ?? "",
                e.tool ?? "(refused before the call)",
                [...(e.target.projectIds ?? []), ...(e.target.threadIds ?? []), ...(e.target.taskIds ?? [])].join(","),
                style(
                  e.reason === null ? e.outcome : `${e.outcome} (${e.reason})`,
                  e.outcome === "ok" ? "green" : "red",
                ),
              ]),
            );
        });
      },
    );
}
