import type { ProjectionReader } from "../../engine/run-lifecycle.js";
import { TurnUsageTable, type UsageScope } from "../../store/tables/turn-usage.js";

/**
 * What a set of provider turns used, as their providers reported it. Usage arrives when a turn
 * ends, so the figures are live at turn granularity: a running turn counts in `turns.inFlight`
 * and adds its figures once it ends.
 */
export interface UsageTotals {
  /**
   * `reported`: every ended turn reported its usage; `partial`: some did not (the figures cover
   * those that did, `turns.unknown` counts the rest); `unknown`: none did (no figures);
   * `none`: no turn has ended yet.
   */
  readonly status: "reported" | "partial" | "unknown" | "none";
  readonly turns: {
    /** Turns that reached their provider and ended. */
    readonly ended: number;
    readonly reported: number;
    /** Ended turns without a usage report: their usage is unknown, not zero. */
    readonly unknown: number;
    /** Turns running now (their usage comes when they end). */
    readonly inFlight: number;
  };
  /** Token sums over the reported turns; null when no turn reported any. */
  readonly tokens: {
    readonly input: number;
    readonly output: number;
    readonly cacheRead: number;
    readonly cacheWrite: number;
    /** Of the output tokens, those spent on reasoning. */
    readonly reasoning: number;
    /** Input, cache read, cache write and output: what a token budget counts. */
    readonly total: number;
  } | null;
  readonly cost: {
    /** Reported plus estimated dollars; null when no turn could be priced. */
    readonly usd: number | null;
    /**
     * `reported`: every ended turn's cost is its provider's own; `estimated`: every ended turn is
     * priced, some from the price table; `partial`: some ended turns could not be priced (see
     * `unpricedTurns`); `unpriced`: none could; `none`: no turn has ended.
     */
    readonly basis: "reported" | "estimated" | "partial" | "unpriced" | "none";
    readonly reportedUsd: number;
    readonly estimatedUsd: number;
    /** Ended turns without a cost: known tokens without a price, or unknown usage. */
    readonly unpricedTurns: number;
  };
}

export type { UsageScope };

/** The tokens and priced dollars a scope used, for budget checks (two indexed sums). */
export async function usedByScope(
  reader: ProjectionReader,
  scope: UsageScope,
): Promise<{ tokens: number; costUsd: number }> {
  return reader.table(TurnUsageTable).used(scope);
}

/** Sums the usage of a scope's turns (see {@link UsageTotals}). */
export async function usageTotals(reader: ProjectionReader, scope: UsageScope): Promise<UsageTotals> {
  const table = reader.table(TurnUsageTable);
  const usage = await table.sums(scope);
  const attempts = await table.attemptCounts(scope);
  // A late terminal can report usage for an attempt the host had already ended otherwise.
  const ended = Math.max(attempts.ended, usage.reported);
  const unknown = ended - usage.reported;
  const status: UsageTotals["status"] =
    ended === 0 ? "none" : usage.reported === 0 ? "unknown" : unknown > 0 ? "partial" : "reported";
  const priced = usage.reported_cost_turns + usage.estimated_cost_turns;
  const unpricedTurns = ended - priced;
  const basis: UsageTotals["cost"]["basis"] =
    ended === 0
      ? "none"
      : priced === 0
        ? "unpriced"
        : unpricedTurns > 0
          ? "partial"
          : usage.estimated_cost_turns > 0
            ? "estimated"
            : "reported";
  return {
    status,
    turns: { ended, reported: usage.reported, unknown, inFlight: attempts.in_flight },
    tokens:
      usage.reported === 0 && ended > 0
        ? null
        : {
            input: usage.input,
            output: usage.output,
            cacheRead: usage.cache_read,
            cacheWrite: usage.cache_write,
            reasoning: usage.reasoning,
            total: usage.total,
          },
    cost: {
      usd: priced === 0 ? (ended === 0 ? 0 : null) : roundUsd(usage.reported_usd + usage.estimated_usd),
      basis,
      reportedUsd: roundUsd(usage.reported_usd),
      estimatedUsd: roundUsd(usage.estimated_usd),
      unpricedTurns,
    },
  };
}

/** Dollars to a millionth of a cent, so sums of floats read as the figures they are. */
export function roundUsd(usd: number): number {
  return Math.round(usd * 1e8) / 1e8;
}
