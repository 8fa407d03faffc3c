import type { Authority, CreationSource } from "../store/records.js";
import type {
  ClientAttachment,
  ClientConnection,
  CredentialCapability,
  ModeCeiling,
  ProjectScope,
  RemoteCaller,
} from "./credentials/mcp-session-registry.js";
import type { ReachGrant } from "./credentials/reach-grant.js";

/**
 * Who asks for an operation, independent of the transport. An agent caller is a provider
 * session inside a Switchyard thread; a client caller (CLI, script) has no thread and no parent
 * run; an environment caller is another Switchyard server calling through a link, held to the
 * grant its secret stands for (`grant`): like a client, it has no thread here, and its projects
 * and ceiling are the grant's.
 */
export interface Caller {
  readonly kind: "agent" | "client" | "environment";
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
  /**
   * The credential the call was authenticated with (a client token, with the web UI sessions
   * made from it; a provider session's; a link grant's), which per-credential limits count
   * against. Absent for callers without one (the CLI's own).
   */
  readonly credentialId?: string;
  readonly capabilities: ReadonlySet<CredentialCapability>;
  /** The projects the caller may use; omitted means every project (agents, unscoped tokens). */
  readonly projects?: ProjectScope;
  /**
   * A client's mode ceiling, from its token: new work without explicit modes gets these, and
   * nothing it creates or changes may be broader. Agents have none (their live run's modes are
   * their ceiling); a client without one has the broadest modes.
   */
  readonly ceiling?: ModeCeiling | null;
  /** An environment caller's grant, read afresh for this call. */
  readonly grant?: ReachGrant;
  /** What an environment caller says about who is calling on its side (unverified). */
  readonly remote?: RemoteCaller;
  /** A client token's connection (`switchyard connect`): its project folder is a default project. */
  readonly connection?: ClientConnection;
  /**
   * The outside agent session a client's MCP call comes from: its `delegate_task` gets an
   * attached thread as the parent, and its roots name the project it works in.
   */
  readonly attachment?: ClientAttachment;
  /** The transport the call came through (recorded as the creation source of what it creates); `mcp` when omitted. */
  readonly transport?: "mcp" | "api";
  /**
   * The credential a client or environment caller presented (its token, the token a web UI
   * session was signed in with, its grant), or the home's owner for the CLI acting on the home
   * directly. Agents have none here: theirs is their thread's (`CallerContext.authority`).
   * Omitted: no authority (nothing it makes can act on its own later).
   */
  readonly authority?: Authority;
}

/** The owner of the home, at the CLI on this machine (who can read the home's files anyway). */
export const OWNER_AUTHORITY: Authority = { kind: "owner" };

/** What the caller's messages and threads record as their creation source. */
export function creationSourceOf(caller: Caller): CreationSource {
  return caller.transport === "api" ? "api" : "mcp";
}
