/**
 * What this driver speaks: stable ACP v1 (through the sdk's shared adapter; the message types
 * are the ACP SDK's, `acpSdk` in `@switchyard/sdk/acp`) with an agent started from an ACP
 * Registry entry. This file holds the registry side: where the catalog lives, which index it
 * reads, and how a registry launch spec becomes the adapter's launch command.
 */
import type { AgentLaunchSpec } from "@switchyard/registry-cache";
import type { AcpLaunchCommand } from "@switchyard/sdk/acp";

export { acpRegistryCacheDir, ACP_REGISTRY_URL_ENV, resolveRegistryUrl } from "@switchyard/registry-cache";

/**
 * The adapter's launch command for a registry launch spec: the registry's command and args,
 * its declared env, then the instance's `env` option on top (so an operator can override a
 * variable the registry declares).
 */
export function toAcpLaunch(
  spec: AgentLaunchSpec,
  extraEnv: Readonly<Record<string, string>> | undefined,
): AcpLaunchCommand {
  return { command: spec.command, args: [...spec.args], env: { ...spec.env, ...(extraEnv ?? {}) } };
}
