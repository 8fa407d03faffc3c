/**
 * What this driver speaks: stable ACP v1 (through the sdk's shared adapter; the message types
 * are the ACP SDK's, `acpSdk` in `@switchyard/sdk/acp`) with an agent started from an ACP
 * Registry entry. This file holds the registry side: where the catalog lives, which index it
 * reads, and how a registry launch spec becomes the adapter's launch command.
 */
import { join } from "node:path";
import { DEFAULT_REGISTRY_URL, type AgentLaunchSpec } from "@switchyard/registry-cache";
import type { AcpLaunchCommand } from "@switchyard/sdk/acp";

/**
 * The registry cache, relative to `$SWITCHYARD_HOME`. Shared with `switchyard registry …`
 * (core/src/cli/commands/registry.ts uses the same segments): the operator installs an agent
 * with the CLI and every instance of this driver launches that install. It is deliberately not
 * the plugin's own `context.paths.cacheDir` (`cache/plugins/<plugin>`), which the CLI cannot
 * know without loading the plugin.
 */
export const ACP_REGISTRY_CACHE_SEGMENTS = ["cache", "acp-registry"] as const;

/** The environment variable that overrides the index URL (for this driver and the CLI). */
export const ACP_REGISTRY_URL_ENV = "SWITCHYARD_ACP_REGISTRY_URL";

/** `<home>/cache/acp-registry`. */
export function acpRegistryCacheDir(home: string): string {
  return join(home, ...ACP_REGISTRY_CACHE_SEGMENTS);
}

/** The index URL: the instance's option, else `$SWITCHYARD_ACP_REGISTRY_URL`, else the public index. */
export function resolveRegistryUrl(option: string | undefined, env: Readonly<Record<string, string | undefined>> = process.env): string {
  if (option !== undefined && option !== "") return option;
  const fromEnv = env[ACP_REGISTRY_URL_ENV];
  return fromEnv !== undefined && fromEnv !== "" ? fromEnv : DEFAULT_REGISTRY_URL;
}

/**
 * The adapter's launch command for a registry launch spec: the registry's command and args,
 * its declared env, then the instance's `env` option on top (so an operator can override a
 * variable the registry declares).
 */
export function toAcpLaunch(spec: AgentLaunchSpec, extraEnv: Readonly<Record<string, string>> | undefined): AcpLaunchCommand {
  return { command: spec.command, args: [...spec.args], env: { ...spec.env, ...(extraEnv ?? {}) } };
}
