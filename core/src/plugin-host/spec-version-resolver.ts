import { SPECIFICATION_VERSION, type PluginDefinition } from "../spec/index.js";

/**
 * Turns a plugin definition written for an older spec version into one of the host's current
 * version: its drivers, the adapters they create and the sessions those open, wrapped so the
 * host only ever sees current interfaces. When the host moves to v2, a `v1` adapter keeps every
 * v1 plugin working (the AI SDK's `asLanguageModelV3` is the model).
 */
export interface SpecVersionAdapter {
  /** The literal it adapts from (`"v1"`). */
  readonly from: string;
  /** Builds the current definition. Throws when the old definition is malformed. */
  adapt(definition: unknown): PluginDefinition;
}

/** The outcome of resolving a definition's `specificationVersion`. */
export type ResolvedDefinition =
  | {
      /** The definition in the host's current version. */
      readonly definition: PluginDefinition;
      /** The literal it was written for, when an adapter converted it; null when it was current. */
      readonly adaptedFrom: string | null;
      /** One line for the log and `plugins list`, when it was adapted. */
      readonly warning: string | null;
    }
  | {
      /** Why it cannot be used: the literal it declares and what this host supports. */
      readonly problem: string;
    };

/**
 * The adapters this host has. Empty while v1 is the only version: a v2 host lists
 * `{ from: "v1", adapt: … }` here.
 */
export const HOST_SPEC_ADAPTERS: readonly SpecVersionAdapter[] = [];

/**
 * Maps a plugin definition's `specificationVersion` to the host's current interface: the
 * current literal as is, an older literal through its adapter (with one warning per plugin), and
 * anything else refused with a message naming the literal and what the host supports.
 */
export class SpecVersionResolver {
  private readonly adapters: ReadonlyMap<string, SpecVersionAdapter>;

  constructor(
    adapters: readonly SpecVersionAdapter[] = HOST_SPEC_ADAPTERS,
    private readonly current: string = SPECIFICATION_VERSION,
  ) {
    this.adapters = new Map(adapters.map((adapter) => [adapter.from, adapter]));
  }

  /** The literals this host accepts: its own, then those it adapts. */
  supported(): string[] {
    return [this.current, ...[...this.adapters.keys()].filter((literal) => literal !== this.current)];
  }

  /** Resolves a definition (already known to be an object). Never throws. */
  resolve(definition: object): ResolvedDefinition {
    const declared = (definition as { specificationVersion?: unknown }).specificationVersion;
    if (declared === this.current)
      return { definition: definition as PluginDefinition, adaptedFrom: null, warning: null };
    const adapter = typeof declared === "string" ? this.adapters.get(declared) : undefined;
    if (adapter === undefined) {
      const supported = this.supported()
        .map((literal) => `"${literal}"`)
        .join(", ");
      return {
        problem: `its definition declares specificationVersion ${JSON.stringify(declared)}, which this host does not implement (it supports ${supported})`,
      };
    }
    try {
      return {
        definition: adapter.adapt(definition),
        adaptedFrom: adapter.from,
        warning: `it implements spec ${adapter.from}; this host implements ${this.current} and runs it through a ${adapter.from} adapter (update the plugin to drop the adapter)`,
      };
    } catch (error) {
      return {
        problem: `its ${adapter.from} definition could not be adapted to ${this.current}: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
  }
}
