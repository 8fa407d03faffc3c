import { join } from "node:path";
import { DEFAULT_REGISTRY_URL } from "./catalog-types.js";

/**
 * Where Switchyard keeps the registry cache, shared by the `switchyard registry` CLI and the
 * acp-registry plugin: what an operator installs is what instances launch.
 */
export function acpRegistryCacheDir(switchyardHome: string): string {
  return join(switchyardHome, "cache", "acp-registry");
}

/** The environment variable that overrides the index URL (for the CLI and the plugin). */
export const ACP_REGISTRY_URL_ENV = "SWITCHYARD_ACP_REGISTRY_URL";

/** The index URL: an explicit one, else `$SWITCHYARD_ACP_REGISTRY_URL`, else the public ACP Registry. */
export function resolveRegistryUrl(
  explicit: string | undefined,
  env: Readonly<Record<string, string | undefined>> = process.env,
): string {
  if (explicit !== undefined && explicit !== "") return explicit;
  const fromEnv = env[ACP_REGISTRY_URL_ENV];
  return fromEnv !== undefined && fromEnv !== "" ? fromEnv : DEFAULT_REGISTRY_URL;
}
