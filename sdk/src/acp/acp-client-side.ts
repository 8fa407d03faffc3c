import * as acp from "@agentclientprotocol/sdk/unstable";
import type { AdapterEvent, PluginLogger } from "@switchyard/spec";
import type { AcpClientHandlers } from "./acp-connection.js";
import type { AcpExtensions, AcpSessionHandle } from "./acp-flavor.js";
import type { ConfinedFileSystem } from "./acp-fs.js";
import type { AcpRuntimeRequests, RequestOrigin } from "./acp-runtime-requests.js";
import type { AcpTurn } from "./acp-turn.js";

/**
 * What an ACP agent reaches of its session: the client handlers it calls, and the
 * {@link AcpSessionHandle} a flavor's extension handlers and hooks get.
 */

/** What a session's client side answers with. */
export interface AcpClientPort {
  /** True once this agent is not the session's current one any more (a respawn, close). */
  readonly stale: () => boolean;
  /** The session's ACP session id once known: updates of other sessions are dropped. */
  readonly acpSessionId: () => string | null;
  readonly fs: ConfinedFileSystem;
  readonly requests: AcpRuntimeRequests;
  /** Must only enqueue: the SDK runs notification handlers concurrently. */
  readonly onUpdate: (update: acp.SessionUpdate) => void;
  /**
   * An update under another session id (an agent's own sub-agent's session, or anything else);
   * the session keeps what it needs of announced children. Must only enqueue.
   */
  readonly onOtherSessionUpdate?: (sessionId: string, update: acp.SessionUpdate) => void;
  /** True for a sub-agent session the agent announced (its requests are attributed to it). */
  readonly isSubagentSession?: (sessionId: string) => boolean;
  readonly extensions: AcpExtensions | undefined;
  /** What extension handlers get for their session. */
  readonly handle: AcpSessionHandle;
}

/**
 * The client side of one agent of a session: files inside the session's cwd, permissions and
 * elicitations through the runtime requests, `session/update` into the session's queue, the
 * flavor's extension methods. A stale agent (replaced or closed) is refused or told `cancelled`.
 */
export function sessionClientHandlers(port: AcpClientPort): AcpClientHandlers {
  const { stale, fs, requests, extensions } = port;
  const handleFor = (params: unknown): AcpSessionHandle | null => {
    const sessionId =
      typeof params === "object" && params !== null ? (params as { sessionId?: unknown }).sessionId : undefined;
    return sessionId === undefined || sessionId === port.acpSessionId() ? port.handle : null;
  };
  // A request under an announced child's session id (codex-acp routes a child's approvals through
  // the root connection that way) is the session's, asked by that child.
  const originOf = (sessionId: unknown): RequestOrigin =>
    typeof sessionId === "string" && sessionId !== port.acpSessionId() && port.isSubagentSession?.(sessionId) === true
      ? { subagentNativeId: sessionId }
      : {};
  return {
    requestPermission: async (params, signal) =>
      stale()
        ? { outcome: { outcome: "cancelled" } }
        : requests.answerPermission(params, signal, originOf(params.sessionId)),
    readTextFile: async (params) => {
      if (stale()) throw acp.RequestError.invalidRequest(undefined, "The session is closed.");
      return { content: await fs.read(params.path, params.line, params.limit) };
    },
    writeTextFile: async (params) => {
      if (stale()) throw acp.RequestError.invalidRequest(undefined, "The session is closed.");
      await fs.write(params.path, params.content);
      return {};
    },
    createElicitation: async (params, signal) =>
      stale()
        ? { action: "cancel" }
        : requests.answerElicitation(params, signal, originOf((params as { sessionId?: unknown }).sessionId)),
    sessionUpdate: (params) => {
      const sessionId = port.acpSessionId();
      if (stale()) return;
      if (sessionId !== null && params.sessionId !== sessionId) {
        port.onOtherSessionUpdate?.(params.sessionId, params.update);
        return;
      }
      port.onUpdate(params.update);
    },
    extensionRequest: async (method, params, signal) => {
      const handler = extensions?.requests?.[method];
      if (handler === undefined || stale()) throw acp.RequestError.methodNotFound(method);
      return handler({ method, params, session: handleFor(params), signal });
    },
    extensionNotification: async (method, params, signal) => {
      const handler = extensions?.notifications?.[method];
      if (handler === undefined || stale()) return;
      await handler({ method, params, session: handleFor(params), signal });
    },
  };
}

/** What the flavor's handle reads and does, from its session. */
export interface AcpHandlePort {
  readonly providerSessionId: string;
  readonly threadId: string;
  readonly cwd: string;
  readonly logger: PluginLogger;
  readonly acpSessionId: () => string | null;
  readonly activeTurn: () => AcpTurn | null;
  /** Emits in order with the session's other events (through its queue). */
  readonly emit: (event: AdapterEvent) => void;
  readonly newItemId: (turnId: string, prefix: string) => string;
  readonly requests: AcpRuntimeRequests;
}

/** The session as a flavor's extension handlers and hooks see it. */
export function sessionHandle(port: AcpHandlePort): AcpSessionHandle {
  return {
    providerSessionId: port.providerSessionId,
    threadId: port.threadId,
    cwd: port.cwd,
    logger: port.logger,
    get acpSessionId() {
      return port.acpSessionId();
    },
    get activeTurn() {
      const turn = port.activeTurn();
      return turn && !turn.terminated
        ? { turnId: turn.turnId, runtimeMode: turn.runtimeMode, interactionMode: turn.interactionMode }
        : null;
    },
    emit: port.emit,
    newItemId: port.newItemId,
    openRuntimeRequest: (turnId, request, options) => port.requests.open(turnId, request, options?.signal),
  };
}
