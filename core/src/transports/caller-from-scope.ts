import type { Caller } from "../services/caller.js";
import type { McpInvocationScope } from "../services/credentials/mcp-session-registry.js";

/** The transport-neutral caller of a request authenticated with an MCP credential (over MCP or the HTTP API). */
export function callerFromScope(scope: McpInvocationScope, transport: "mcp" | "api" = "mcp"): Caller {
  return {
    kind: scope.kind === "provider_session" ? "agent" : scope.kind,
    threadId: scope.threadId,
    projectId: scope.projectId,
    providerInstanceId: scope.providerInstanceId,
    providerSessionId: scope.providerSessionId,
    // An agent's retry keys belong to its thread, not to one provider session: every continued
    // run after a restart opens a new session, and its retry must land on the same work. A
    // client's belong to its token, whichever transport it calls through.
    // A linked environment's belong to its grant (its credentialId is the grant's id).
    requestScope:
      scope.kind === "provider_session" && scope.threadId !== null
        ? `thread:${scope.threadId}`
        : `credential:${scope.credentialId}`,
    credentialId: scope.credentialId,
    capabilities: scope.capabilities,
    projects: scope.projects,
    ceiling: scope.ceiling,
    ...(scope.grant !== undefined ? { grant: scope.grant } : {}),
    ...(scope.remote !== undefined ? { remote: scope.remote } : {}),
    ...(scope.connection !== undefined ? { connection: scope.connection } : {}),
    ...(scope.attachment !== undefined ? { attachment: scope.attachment } : {}),
    // A linked environment's credentialId is its grant's id.
    ...(scope.kind === "client" ? { authority: { kind: "token" as const, credentialId: scope.credentialId } } : {}),
    ...(scope.kind === "environment"
      ? { authority: { kind: "grant" as const, grantId: scope.grant?.id ?? scope.credentialId } }
      : {}),
    transport,
  };
}
