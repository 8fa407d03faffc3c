import type { ModelPrice } from "../../config/config-schema.js";

/**
 * The day the shipped prices were taken from the providers' published list prices (US dollars
 * per million tokens, standard tier, no batch discount, prompts under any long-context
 * threshold). Every estimate made from them says so; `pricing` in config.json overrides them.
 */
export const DEFAULT_PRICES_AS_OF = "2025-11-01";

/**
 * List prices Switchyard ships, keyed like the config's `pricing.models` (a key also matches
 * dated and suffixed ids: `claude-sonnet-4-5` prices `claude-sonnet-4-5-20250929`). Cache
 * writes are Anthropic's 5-minute writes; OpenAI and Google bill no cache writes.
 */
export const DEFAULT_MODEL_PRICES: Readonly<Record<string, ModelPrice>> = {
  // OpenAI
  "gpt-5": { input: 1.25, cacheRead: 0.125, output: 10 },
  "gpt-5-codex": { input: 1.25, cacheRead: 0.125, output: 10 },
  "gpt-5-mini": { input: 0.25, cacheRead: 0.025, output: 2 },
  "gpt-5-nano": { input: 0.05, cacheRead: 0.005, output: 0.4 },
  "gpt-5-pro": { input: 15, output: 120 },
  "gpt-4.1": { input: 2, cacheRead: 0.5, output: 8 },
  "gpt-4.1-mini": { input: 0.4, cacheRead: 0.1, output: 1.6 },
  "gpt-4.1-nano": { input: 0.1, cacheRead: 0.025, output: 0.4 },
  "gpt-4o": { input: 2.5, cacheRead: 1.25, output: 10 },
  "gpt-4o-mini": { input: 0.15, cacheRead: 0.075, output: 0.6 },
  o3: { input: 2, cacheRead: 0.5, output: 8 },
  "o3-mini": { input: 1.1, cacheRead: 0.55, output: 4.4 },
  "o3-pro": { input: 20, output: 80 },
  "o4-mini": { input: 1.1, cacheRead: 0.275, output: 4.4 },
  "codex-mini-latest": { input: 1.5, cacheRead: 0.375, output: 6 },
  // Anthropic
  "claude-opus-4-5": { input: 5, cacheWrite: 6.25, cacheRead: 0.5, output: 25 },
  "claude-opus-4-1": { input: 15, cacheWrite: 18.75, cacheRead: 1.5, output: 75 },
  "claude-opus-4": { input: 15, cacheWrite: 18.75, cacheRead: 1.5, output: 75 },
  "claude-sonnet-4-5": { input: 3, cacheWrite: 3.75, cacheRead: 0.3, output: 15 },
  "claude-sonnet-4": { input: 3, cacheWrite: 3.75, cacheRead: 0.3, output: 15 },
  "claude-3-7-sonnet": { input: 3, cacheWrite: 3.75, cacheRead: 0.3, output: 15 },
  "claude-haiku-4-5": { input: 1, cacheWrite: 1.25, cacheRead: 0.1, output: 5 },
  "claude-3-5-haiku": { input: 0.8, cacheWrite: 1, cacheRead: 0.08, output: 4 },
  // Google
  "gemini-2.5-pro": { input: 1.25, cacheRead: 0.31, output: 10 },
  "gemini-2.5-flash": { input: 0.3, cacheRead: 0.075, output: 2.5 },
  "gemini-2.5-flash-lite": { input: 0.1, cacheRead: 0.025, output: 0.4 },
};
