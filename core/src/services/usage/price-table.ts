import type { ModelPrice, PricingConfig } from "../../config/config-schema.js";
import type { UsageFigures } from "../../store/records.js";
import { DEFAULT_MODEL_PRICES, DEFAULT_PRICES_AS_OF } from "./default-prices.js";

/** A price found for a model, and where it came from. */
export interface PriceMatch {
  readonly price: ModelPrice;
  /** The table key that matched. */
  readonly key: string;
  readonly source: "config" | "default";
  /** The day the price was taken (the config's `pricing.asOf`, else null; the shipped date for defaults). */
  readonly asOf: string | null;
}

/** An estimated cost and the entries it used. */
export interface CostEstimate {
  readonly costUsd: number;
  readonly entries: readonly {
    readonly model: string;
    readonly source: "config" | "default";
    readonly asOf: string | null;
  }[];
}

/** A key matches the id itself, or the id continued after one of these (`-20250929`, `.1`, `:beta`). */
const CONTINUATION = /^[-.:@_]/;

function lookup(table: Readonly<Record<string, ModelPrice>>, model: string): { key: string; price: ModelPrice } | null {
  let best: { key: string; price: ModelPrice } | null = null;
  for (const [key, price] of Object.entries(table)) {
    if (model !== key && !(model.startsWith(key) && CONTINUATION.test(model.slice(key.length)))) continue;
    if (best === null || key.length > best.key.length) best = { key, price };
  }
  return best;
}

/** Ids to try for a model: as given, then without a provider prefix (`anthropic/claude-…`, `fake/fake-model`). */
function candidates(model: string): string[] {
  const slash = model.lastIndexOf("/");
  return slash < 0 ? [model] : [model, model.slice(slash + 1)];
}

/** The dollar cost of figures at a price (cache prices default to the input price). */
export function costAt(price: ModelPrice, figures: UsageFigures): number {
  const perToken = (perMillion: number) => perMillion / 1_000_000;
  return (
    (figures.inputTokens ?? 0) * perToken(price.input) +
    (figures.cacheReadInputTokens ?? 0) * perToken(price.cacheRead ?? price.input) +
    (figures.cacheCreationInputTokens ?? 0) * perToken(price.cacheWrite ?? price.input) +
    (figures.outputTokens ?? 0) * perToken(price.output)
  );
}

/**
 * The price table: the config's `pricing` over the shipped list prices. It only estimates a
 * turn whose provider reported no cost, and an estimate always says which entries (and which
 * day's prices) it used. A model it cannot price stays unpriced: never a silent $0.
 */
export class PriceTable {
  // The table is fixed for the host's life; a turn end looks its model up once per model.
  private readonly matches = new Map<string, PriceMatch | null>();

  constructor(private readonly config: PricingConfig) {}

  /** The price of a model on a provider instance, or null. */
  priceFor(providerInstanceId: string, model: string): PriceMatch | null {
    const key = `${providerInstanceId}\u0000${model}`;
    if (this.matches.has(key)) return this.matches.get(key)!;
    const match = this.findPrice(providerInstanceId, model);
    this.matches.set(key, match);
    return match;
  }

  private findPrice(providerInstanceId: string, model: string): PriceMatch | null {
    const configAsOf = this.config.asOf ?? null;
    for (const id of candidates(model)) {
      const own = this.config.providers[providerInstanceId];
      const byProvider = own === undefined ? null : lookup(own, id);
      if (byProvider !== null) return { ...byProvider, source: "config", asOf: configAsOf };
      const shared = lookup(this.config.models, id);
      if (shared !== null) return { ...shared, source: "config", asOf: configAsOf };
    }
    if (!this.config.useDefaults) return null;
    for (const id of candidates(model)) {
      const shipped = lookup(DEFAULT_MODEL_PRICES, id);
      if (shipped !== null) return { ...shipped, source: "default", asOf: DEFAULT_PRICES_AS_OF };
    }
    return null;
  }

  /**
   * Estimates a turn: model by model when the provider broke its usage down and every model
   * has a price, else the totals at the turn's model. Null when no price applies.
   */
  estimate(
    providerInstanceId: string,
    model: string | null,
    totals: UsageFigures,
    byModel: Readonly<Record<string, UsageFigures>> | null,
  ): CostEstimate | null {
    const models = byModel === null ? [] : Object.entries(byModel);
    if (models.length > 0) {
      const priced = models.map(([id, figures]) => ({ id, figures, match: this.priceFor(providerInstanceId, id) }));
      if (priced.every((entry) => entry.match !== null)) {
        return {
          costUsd: priced.reduce((sum, entry) => sum + costAt(entry.match!.price, entry.figures), 0),
          entries: priced.map((entry) => ({
            model: entry.match!.key,
            source: entry.match!.source,
            asOf: entry.match!.asOf,
          })),
        };
      }
    }
    if (model === null) return null;
    const match = this.priceFor(providerInstanceId, model);
    if (match === null) return null;
    return {
      costUsd: costAt(match.price, totals),
      entries: [{ model: match.key, source: match.source, asOf: match.asOf }],
    };
  }
}
