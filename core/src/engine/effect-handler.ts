import type { OutboxEffect } from "../store/ports.js";
import { token } from "../util/di-token.js";

/**
 * Outbox effects a layer above the engine carries out (a workspace's git work), handed to the
 * engine by the composition root (`EffectHandlersToken`) like its reactions. Unlike provider
 * effects, which are bound to a harness process that a restart ends, these act on lasting things
 * (a folder, a repository): each is written to be run again, so one a crash cut short runs again
 * after the restart instead of being abandoned.
 */
export interface EffectHandler {
  /** Names the handler (logs). */
  readonly name: string;
  /** The effect types it carries out. */
  readonly types: readonly string[];
  /** Carries out one effect; running it again after a crash is safe. */
  execute(effect: OutboxEffect): Promise<void>;
}

/** DI token: outbox effects carried out above the engine (a workspace's git work), which survive a restart. */
export const EffectHandlersToken = token<readonly EffectHandler[]>("EffectHandlers");
