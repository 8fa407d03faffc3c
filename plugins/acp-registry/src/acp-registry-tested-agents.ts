import type { HarnessSpec } from "@switchyard/sdk";

/**
 * The registry agents this plugin's tests drive for real (from npm, against the scripted
 * model), as the sdk's harness data: what `npm run harness-currency` compares with the newest
 * on npm, and what an instance naming one of these agents reports in `switchyard providers
 * --json` (`harness.testedVersions`, and a warning outside the range). Any other registry agent
 * works the same way; it is only untested.
 */

/** codex-acp, the registry's `codex-acp` (an npx distribution of this package since it left zed-industries). */
export const CODEX_ACP_HARNESS: HarnessSpec = {
  displayName: "codex-acp",
  commands: ["codex-acp"],
  packages: ["@agentclientprotocol/codex-acp"],
  install: "switchyard registry install codex-acp",
  testedVersions: "~2.6.0",
};

/** Gemini CLI over `--acp`, the registry's `gemini`. */
export const GEMINI_CLI_ACP_HARNESS: HarnessSpec = {
  displayName: "Gemini CLI (--acp)",
  commands: ["gemini"],
  packages: ["@google/gemini-cli"],
  install: "switchyard registry install gemini",
  testedVersions: "~0.61.0",
};

/** The tested agents by registry agent id. */
export const TESTED_REGISTRY_AGENTS: Readonly<Record<string, HarnessSpec>> = {
  "codex-acp": CODEX_ACP_HARNESS,
  gemini: GEMINI_CLI_ACP_HARNESS,
};

/** The harness data of a registry agent this plugin was tested with, else undefined. */
export function testedRegistryAgent(agentId: string): HarnessSpec | undefined {
  return Object.hasOwn(TESTED_REGISTRY_AGENTS, agentId) ? TESTED_REGISTRY_AGENTS[agentId] : undefined;
}
