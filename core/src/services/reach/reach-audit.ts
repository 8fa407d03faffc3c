import { inject, injectable } from "tsyringe";
import { type Logger, LoggerToken } from "../../logging/logger.js";
import { type EventStore, StoreToken } from "../../store/ports.js";
import { ReachAuditTable } from "../../store/tables/reach-audit.js";
import { type Clock, ClockToken } from "../../util/clock.js";
import type { GrantVerb } from "../credentials/reach-grant.js";

/** Which side of a call across environments a row records. */
export type ReachAuditDirection = "in" | "out";

/** What a call across environments touched: the ids it named, never its text. */
export interface ReachAuditTarget {
  readonly projectIds?: readonly string[];
  readonly threadIds?: readonly string[];
  readonly taskIds?: readonly string[];
}

/** What to record about one call across environments. Ids and codes only: never a secret, a prompt or a message. */
export interface ReachAuditRecord {
  /** `in`: a linked environment called here under a grant; `out`: this environment called a link. */
  readonly direction: ReachAuditDirection;
  /** `in`: the grant the caller's secret stands for (null when the secret matched none). */
  readonly grantId?: string | null;
  /** `in`: the grant's `--for` name; `out`: the link's name. */
  readonly environment?: string | null;
  /** `in`: the caller's environment id as it says (unverified); `out`: the link's environment id when known. */
  readonly remoteEnvironmentId?: string | null;
  /** The calling thread: `in`, on the other side as it says (unverified); `out`, this side's. */
  readonly callerThreadId?: string | null;
  readonly verb?: GrantVerb | null;
  /** The MCP tool; null when the call was refused before its body was read (a revoked grant). */
  readonly tool?: string | null;
  readonly target?: ReachAuditTarget;
  /** `ok`, or the failure code the caller got (`capability_denied`, `provider_unavailable`, …). */
  readonly outcome: string;
  /** A short machine reason for a refusal (`revoked`, `expired`, `verb`, `project`, `unreachable`, …). */
  readonly reason?: string | null;
}

/** A recorded row. */
export interface ReachAuditEntry extends Required<Omit<ReachAuditRecord, "target">> {
  readonly id: number;
  readonly at: string;
  readonly target: ReachAuditTarget;
}

interface AuditData {
  environment: string | null;
  remoteEnvironmentId: string | null;
  callerThreadId: string | null;
  target: ReachAuditTarget;
  reason: string | null;
}

/** At most this many rows per read. */
export const MAX_AUDIT_LIMIT = 1_000;

function bounded(value: string | null | undefined, max = 200): string | null {
  return value === undefined || value === null ? null : value.slice(0, max);
}

function ids(values: readonly string[] | undefined): string[] | undefined {
  return values === undefined || values.length === 0
    ? undefined
    : [...new Set(values)].slice(0, 50).map((value) => value.slice(0, 200));
}

/**
 * The audit of calls across environments: one row per call, on each side. B records every tool
 * call a linked environment makes (and every call refused for a revoked or expired grant); A
 * records every call its link client makes. Rows hold ids, verbs and outcome codes only — never
 * a secret, prompt or message text — so reading them needs only the read capability.
 */
@injectable()
export class ReachAudit {
  private readonly table: ReachAuditTable;

  constructor(
    @inject(StoreToken) private readonly store: EventStore,
    @inject(ClockToken) private readonly clock: Clock,
    @inject(LoggerToken) private readonly logger: Logger,
  ) {
    this.table = new ReachAuditTable(store);
  }

  /** Records one call. */
  record(entry: ReachAuditRecord): void {
    const target: ReachAuditTarget = {
      ...(ids(entry.target?.projectIds) ? { projectIds: ids(entry.target?.projectIds) } : {}),
      ...(ids(entry.target?.threadIds) ? { threadIds: ids(entry.target?.threadIds) } : {}),
      ...(ids(entry.target?.taskIds) ? { taskIds: ids(entry.target?.taskIds) } : {}),
    };
    const data: AuditData = {
      environment: bounded(entry.environment),
      remoteEnvironmentId: bounded(entry.remoteEnvironmentId),
      callerThreadId: bounded(entry.callerThreadId),
      target,
      reason: bounded(entry.reason),
    };
    const row = {
      at: this.clock.nowMs(),
      direction: entry.direction,
      grant_id: bounded(entry.grantId),
      link_name: entry.direction === "out" ? bounded(entry.environment) : null,
      verb: entry.verb ?? null,
      tool: bounded(entry.tool),
      outcome: bounded(entry.outcome, 64) ?? "ok",
      data: JSON.stringify(data),
    };
    // Served calls run beside commands: the row is written now when the store is free, else
    // once the command under way commits (its callers answer without waiting for it).
    this.store
      .writeAsync(() => this.table.insert(row))
      .catch((error: unknown) =>
        this.logger.error("could not write a reach audit row", { tool: row.tool, error: (error as Error).message }),
      );
  }

  /** Rows newest first, at or after `sinceMs` when given, at most `limit` (default 100, at most 1000). */
  async list(
    options: { sinceMs?: number; limit?: number; direction?: ReachAuditDirection } = {},
  ): Promise<ReachAuditEntry[]> {
    const limit = Math.min(Math.max(Math.trunc(options.limit ?? 100), 1), MAX_AUDIT_LIMIT);
    const rows = await this.table.newestSince(options.sinceMs ?? 0, options.direction ?? null, limit);
    return rows.map((row) => {
      const data = JSON.parse(row.data) as AuditData;
      return {
        id: row.id,
        at: new Date(row.at).toISOString(),
        direction: row.direction,
        grantId: row.grant_id,
        environment: data.environment,
        remoteEnvironmentId: data.remoteEnvironmentId,
        callerThreadId: data.callerThreadId,
        verb: row.verb as GrantVerb | null,
        tool: row.tool,
        target: data.target,
        outcome: row.outcome,
        reason: data.reason,
      };
    });
  }
}
