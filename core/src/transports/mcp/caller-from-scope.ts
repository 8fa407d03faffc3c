import type { Caller } from "../../services/caller.js";
import type { McpInvocationScope } from "../../services/credentials/mcp-session-registry.js";

/** The transport-neutral caller of an MCP request. */
export function callerFromScope(scope: McpInvocationScope): Caller {
  return {
    kind: scope.kind === "provider_session" ? "agent" : "client",
    threadId: scope.threadId,
    projectId: scope.projectId,
    providerInstanceId: scope.providerInstanceId,
    providerSessionId: scope.providerSessionId,
    requestScope: scope.requestScope,
    capabilities: scope.capabilities,
  };
}
