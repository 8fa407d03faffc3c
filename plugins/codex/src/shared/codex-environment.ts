import { delimiter } from "node:path";
import {
  sessionEnvironment,
  type McpEndpointGrant,
  type OpenSessionInput,
  type ProviderInstanceDescriptor,
} from "@switchyard/sdk";
import type { CodexBinary } from "./codex-binary.js";

/**
 * The env var that carries the session's MCP bearer token to Codex. Codex reads it through
 * `bearer_token_env_var` and sends `Authorization: Bearer <token>`; the token itself is never in
 * argv, config or logs.
 */
export const MCP_TOKEN_ENV_VAR = "SWITCHYARD_MCP_BEARER_TOKEN";

/** Host variables that must not leak into a harness (Switchyard's own credentials and settings). */
const HOST_ONLY_PREFIX = "SWITCHYARD_";

/**
 * The complete environment of a Codex process: the host's environment without Switchyard's own
 * variables, then the instance's `environment`, `CODEX_HOME` from the instance's home, a
 * session's profile environment and home (`CODEX_HOME`), what the npm wrapper would set, the
 * bundled tools on PATH, and the session's MCP token.
 */
export function codexEnvironment(input: {
  readonly instance: ProviderInstanceDescriptor;
  readonly binary: CodexBinary | null;
  readonly grant: McpEndpointGrant | null;
  /** A session's profile settings (absent for probes and the instance's own listings). */
  readonly session?: Pick<OpenSessionInput, "environment" | "harnessHome">;
}): Record<string, string> {
  let env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith(HOST_ONLY_PREFIX)) env[key] = value;
  }
  Object.assign(env, input.binary?.env ?? {}, input.instance.environment);
  if (input.instance.homePath !== null) env.CODEX_HOME = input.instance.homePath;
  if (input.session !== undefined) env = sessionEnvironment(env, input.session, "CODEX_HOME");
  const pathDirs = input.binary?.pathDirs ?? [];
  if (pathDirs.length > 0) {
    const rest = (env.PATH ?? "").split(delimiter).filter((entry) => entry.length > 0 && !pathDirs.includes(entry));
    env.PATH = [...pathDirs, ...rest].join(delimiter);
  }
  if (input.grant !== null) env[MCP_TOKEN_ENV_VAR] = input.grant.token;
  else delete env[MCP_TOKEN_ENV_VAR];
  return env;
}
