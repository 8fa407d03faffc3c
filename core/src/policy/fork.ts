import type { ProviderCapabilities } from "../spec/index.js";

/** Input to {@link decideFork}. */
export interface ForkQuery {
  /** The fork stays on the source thread's provider instance. */
  readonly sameProviderInstance: boolean;
  /** The source has a native conversation to copy (a resume cursor). */
  readonly sourceHasNativeThread: boolean;
  /** The fork cuts at a given turn rather than the latest state. */
  readonly atTurn: boolean;
  readonly capabilities: ProviderCapabilities;
}

/** How a fork is carried out, and why. */
export interface ForkDecision {
  readonly action: "native" | "portable";
  readonly reason: string;
}

/**
 * Native fork only when the provider copies conversations itself, from the right point, with
 * stable native ids; otherwise the conversation travels as portable context (a summary in the
 * first prompt), which works on every provider.
 */
export function decideFork(query: ForkQuery): ForkDecision {
  const { capabilities } = query;
  if (!query.sameProviderInstance)
    return { action: "portable", reason: "The fork moves to another provider instance." };
  if (!capabilities.threads.fork) return { action: "portable", reason: "The provider cannot fork natively." };
  if (query.atTurn && !capabilities.threads.forkFromTurn)
    return { action: "portable", reason: "The provider cannot fork from a given turn." };
  if (capabilities.identity.nativeThreadIds !== "strong")
    return { action: "portable", reason: "The provider's thread ids are not stable enough to fork from." };
  if (!query.sourceHasNativeThread)
    return { action: "portable", reason: "The source thread has no native conversation yet." };
  return { action: "native", reason: "The provider forks the conversation natively." };
}
