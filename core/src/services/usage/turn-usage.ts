import type { TurnUsageReport } from "../../spec/index.js";
import type { AttemptRecord, TurnUsageRecord, UsageFigures } from "../../store/records.js";
import type { PriceTable } from "./price-table.js";

type ReportedFigures = Omit<TurnUsageReport, "byModel">;

/** A count a provider reported, or null: negative or non-finite values are not counts. */
function count(value: number | undefined): number | null {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : null;
}

function figuresOf(report: ReportedFigures): UsageFigures {
  return {
    inputTokens: count(report.inputTokens),
    outputTokens: count(report.outputTokens),
    cacheReadInputTokens: count(report.cacheReadInputTokens),
    cacheCreationInputTokens: count(report.cacheCreationInputTokens),
    reasoningOutputTokens: count(report.reasoningOutputTokens),
  };
}

/** Input, cache read, cache write and output tokens (reasoning is already in output). */
export function totalTokensOf(figures: UsageFigures): number {
  return (
    (figures.inputTokens ?? 0) +
    (figures.cacheReadInputTokens ?? 0) +
    (figures.cacheCreationInputTokens ?? 0) +
    (figures.outputTokens ?? 0)
  );
}

function hasAnyFigure(figures: UsageFigures): boolean {
  return Object.values(figures).some((value) => value !== null);
}

/** What a turn is, for its usage record: where it ran and on which model. */
export interface TurnIdentity {
  readonly attempt: AttemptRecord;
  readonly rootThreadId: string;
  readonly providerInstanceId: string;
  readonly model: string | null;
  readonly now: string;
}

/**
 * The usage record of a turn from its provider's report, or null when the report says nothing
 * (no token figure, no cost): that turn's usage is unknown, not zero. The cost is the
 * provider's own when it reported one (`reported`), else the price table's estimate
 * (`estimated`), else none (`unpriced`).
 */
export function turnUsageRecord(
  turn: TurnIdentity,
  report: TurnUsageReport,
  prices: PriceTable,
): TurnUsageRecord | null {
  const figures = figuresOf(report);
  const reportedCost = count(report.costUsd);
  if (!hasAnyFigure(figures) && reportedCost === null) return null;
  const byModelEntries = Object.entries(report.byModel ?? {});
  const byModelFigures =
    byModelEntries.length === 0
      ? null
      : Object.fromEntries(byModelEntries.map(([model, usage]) => [model, figuresOf(usage)]));
  let costUsd: number | null = reportedCost;
  let costBasis: TurnUsageRecord["costBasis"] = "reported";
  let pricing: TurnUsageRecord["pricing"] = null;
  if (reportedCost === null) {
    const estimate = prices.estimate(turn.providerInstanceId, turn.model, figures, byModelFigures);
    costUsd = estimate?.costUsd ?? null;
    costBasis = estimate === null ? "unpriced" : "estimated";
    pricing = estimate === null ? null : { entries: estimate.entries };
  }
  return {
    id: turn.attempt.id,
    runId: turn.attempt.runId,
    threadId: turn.attempt.threadId,
    rootThreadId: turn.rootThreadId,
    providerInstanceId: turn.providerInstanceId,
    model: turn.model,
    ...figures,
    totalTokens: totalTokensOf(figures),
    costUsd,
    costBasis,
    pricing,
    byModel:
      byModelEntries.length === 0
        ? null
        : Object.fromEntries(
            byModelEntries.map(([model, usage]) => [model, { ...figuresOf(usage), costUsd: count(usage.costUsd) }]),
          ),
    createdAt: turn.now,
  };
}
