import type {
  CredentialCapability,
  ModeCeiling,
  ProjectScope,
} from "../../src/services/credentials/mcp-session-registry.js";
import { ApiClient } from "./api-client.js";
import { McpLab } from "./mcp-lab.js";

/** What an API test's client token may do: its verbs, and (when given) its mode ceiling and projects. */
export interface ClientTokenScope {
  readonly capabilities: CredentialCapability[];
  readonly ceiling?: ModeCeiling;
  readonly projects?: ProjectScope;
}

/** The broadest ceiling: work in full access, default interaction mode. */
export const FULL_ACCESS_CEILING: ModeCeiling = { runtimeMode: "full-access", interactionMode: "default" };

/** A client of `lab`'s HTTP API holding a new client token (valid for an hour) with `scope`. */
export function apiClientFor(lab: McpLab, scope: ClientTokenScope): ApiClient {
  const { token } = lab.registry.issueClientToken({
    ttlMs: 3_600_000,
    capabilities: scope.capabilities,
    ...(scope.ceiling !== undefined ? { ceiling: scope.ceiling } : {}),
    ...(scope.projects !== undefined ? { projects: scope.projects } : {}),
  });
  return new ApiClient(lab.server.apiUrl, token);
}

/**
 * What every API test starts from: a host with its HTTP server and a project ({@link McpLab},
 * started with `options`), and an API client whose token has `scope`. Stop it with `lab.stop()`.
 */
export async function startApiLab(
  scope: ClientTokenScope,
  options: Parameters<typeof McpLab.start>[0] = {},
): Promise<{ lab: McpLab; client: ApiClient; token: string }> {
  const lab = await McpLab.start(options);
  const client = apiClientFor(lab, scope);
  return { lab, client, token: client.token! };
}
