import { z } from "zod";
import { INTERACTION_MODES, RUNTIME_MODES } from "../spec/index.js";

/**
 * The fields many operations share (seed 000): modes, a target, the retry key, a run's status.
 * Field names, enums and failure codes follow the seed exactly.
 */

export const RuntimeModeInput = z.enum(["inherit", ...RUNTIME_MODES]);
export const InteractionModeInput = z.enum(["inherit", ...INTERACTION_MODES]);
export const RuntimeModeOutput = z.enum(RUNTIME_MODES);
export const InteractionModeOutput = z.enum(INTERACTION_MODES);

/**
 * An input naming a thread of this environment. Results carry a thread's link and web URL
 * beside its id; an agent may hand back whichever it holds (transports/thread-refs.ts resolves it).
 */
export function threadReference(what: string) {
  return z
    .string()
    .min(1)
    .describe(`${what}: its id, its switchyard-thread:// link or its page URL in this server's web UI (webUrl).`);
}

/**
 * `profile` on every request that starts work (Switchyard's addition, docs/profiles.md): a name
 * from orchestrator_capabilities `profiles`.
 */
export const ProfileName = z
  .string()
  .min(1)
  .max(100)
  .describe(
    "A profile from orchestrator_capabilities profiles: it supplies the target, the instructions the first prompt goes with, mode ceilings and workspace. Explicit fields may narrow it (a narrower mode), never widen it; an unknown profile is invalid_request listing the available ones.",
  );

export const Target = z
  .object({
    providerInstanceId: z.string().min(1).optional().describe("An exact provider instance; fails when unavailable."),
    driverKind: z
      .string()
      .min(1)
      .optional()
      .describe("A driver (codex, pi, …); the parent's instance if it matches, else an available instance of it."),
    model: z
      .string()
      .min(1)
      .optional()
      .describe(
        "A model the provider advertises; omitted inherits or uses the provider's default model (else the first it lists).",
      ),
    effort: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .describe(
        "A reasoning effort the model lists (orchestrator_capabilities models[].efforts); another is refused naming the supported ones. Omitted inherits with the model, else the provider's default.",
      ),
  })
  .strict();

export const ClientRequestId = z
  .string()
  .min(1)
  .max(200)
  .describe("Retry key: the same key returns the same durable work. Use a new key for new work.");

export const RunStatus = z.enum([
  "queued",
  "starting",
  "running",
  "waiting",
  "completed",
  "failed",
  "cancelled",
  "interrupted",
]);
