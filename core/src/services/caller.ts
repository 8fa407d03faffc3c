import type { CredentialCapability } from "./credentials/mcp-session-registry.js";

/**
 * Who asks for an operation, independent of the transport. An agent caller is a provider
 * session inside a Switchyard thread; a client caller (CLI, script, another machine) has no
 * thread and no parent run.
 */
export interface Caller {
  readonly kind: "agent" | "client";
  readonly threadId: string | null;
  readonly projectId: string | null;
  readonly providerInstanceId: string | null;
  readonly providerSessionId: string | null;
  /**
   * Scopes clientRequestId-derived ids, so two callers reusing one key never collide: an agent's
   * thread (the same across its provider sessions, so a retry after a restart finds its work),
   * or a client's token.
   */
  readonly requestScope: string;
  readonly capabilities: ReadonlySet<CredentialCapability>;
}
