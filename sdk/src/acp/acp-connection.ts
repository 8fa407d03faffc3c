import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { SwitchyardError, hasErrorCode } from "@switchyard/spec";
import type { AcpChannel, AcpChannelFactory, AcpLaunchCommand } from "./acp-flavor.js";

/**
 * What the shared adapter tells every agent it can do as a client. Two `/unstable` drafts
 * change what an agent sends, so the adapter handles them:
 * - `session.notices`: warnings and notes arrive as `notice` updates (reported as `warning`
 *   events) instead of being mixed into the assistant's text (codex-acp 2.x does that otherwise);
 * - `subagents`: the agent's own sub-agents arrive as `subagent_update` on the parent session
 *   (reported as `subagent.observed`); of their own traffic, under the child's session id, only
 *   the model and assistant text are kept (never part of the conversation). Switchyard never
 *   messages, cancels or loads a child.
 *
 * @public
 */
export const ACP_CLIENT_CAPABILITIES: acp.ClientCapabilities = {
  fs: { readTextFile: true, writeTextFile: true },
  terminal: false,
  elicitation: { form: {}, url: {} },
  session: { notices: {} },
  subagents: {},
};

/** The default channel: the agent as a child process in its own group, ACP over its stdio. @public */
export const spawnAcpChannel: AcpChannelFactory = (launch, options) => {
  const child = options.context.process.spawn(launch.command, launch.args, {
    cwd: options.cwd,
    env: options.env,
    label: options.label,
    stdin: "pipe",
  });
  if (child.stdin === null)
    throw new SwitchyardError("internal", "The agent process has no stdin pipe.", { label: options.label });
  // A dead agent makes writes fail with EPIPE; the connection notices through its stream.
  child.stdin.on("error", () => undefined);
  const stream = acp.ndJsonStream(
    Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
    Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
  );
  return {
    stream,
    pid: child.pid,
    exited: child.exited,
    kill: () => child.kill("SIGTERM", 2_000),
    // The host's process helpers keep the tail (secrets scrubbed).
    stderrTail: () => child.stderrTail(),
  } satisfies AcpChannel;
};

/** Everything the client side answers; the session implements it. */
export interface AcpClientHandlers {
  requestPermission(params: acp.RequestPermissionRequest, signal: AbortSignal): Promise<acp.RequestPermissionResponse>;
  readTextFile(params: acp.ReadTextFileRequest): Promise<acp.ReadTextFileResponse>;
  writeTextFile(params: acp.WriteTextFileRequest): Promise<acp.WriteTextFileResponse>;
  createElicitation(params: acp.CreateElicitationRequest, signal: AbortSignal): Promise<acp.CreateElicitationResponse>;
  /** Must only enqueue work: notification handlers run concurrently in the SDK. */
  sessionUpdate(params: acp.SessionNotification): void;
  extensionRequest(method: string, params: unknown, signal: AbortSignal): Promise<unknown>;
  extensionNotification(method: string, params: unknown, signal: AbortSignal): Promise<void>;
}

/** Handlers for a connection that opens no session (status probes). */
export const REFUSING_HANDLERS: AcpClientHandlers = {
  requestPermission: async () => ({ outcome: { outcome: "cancelled" } }),
  readTextFile: async () => {
    throw acp.RequestError.invalidRequest(undefined, "No session is open.");
  },
  writeTextFile: async () => {
    throw acp.RequestError.invalidRequest(undefined, "No session is open.");
  },
  createElicitation: async () => ({ action: "cancel" }),
  sessionUpdate: () => undefined,
  extensionRequest: async (method) => {
    throw acp.RequestError.methodNotFound(method);
  },
  extensionNotification: async () => undefined,
};

/** Converts a Switchyard error into the JSON-RPC error the agent sees. */
export function toRequestError(error: unknown): acp.RequestError {
  if (error instanceof acp.RequestError) return error;
  if (hasErrorCode(error)) {
    if (error.code === "invalid_input") return acp.RequestError.invalidParams(error.details, error.message);
    if (error.code === "not_found") return new acp.RequestError(-32002, error.message, error.details);
    return acp.RequestError.internalError(error.details, error.message);
  }
  return acp.RequestError.internalError(undefined, error instanceof Error ? error.message : String(error));
}

/** Builds the client app with every handler routed to `handlers`, and connects it. */
export function connectClient(
  stream: acp.Stream,
  handlers: AcpClientHandlers,
  name = "switchyard",
): acp.ClientConnection {
  const guard = <T>(work: () => Promise<T>): Promise<T> =>
    work().catch((error: unknown) => {
      throw toRequestError(error);
    });
  return acp
    .client({ name })
    .onRequest(acp.methods.client.session.requestPermission, ({ params, signal }) =>
      guard(() => handlers.requestPermission(params, signal)),
    )
    .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => guard(() => handlers.readTextFile(params)))
    .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => guard(() => handlers.writeTextFile(params)))
    .onRequest(acp.methods.client.elicitation.create, ({ params, signal }) =>
      guard(() => handlers.createElicitation(params, signal)),
    )
    .onNotification(acp.methods.client.session.update, ({ params }) => handlers.sessionUpdate(params))
    .onNotification(acp.methods.client.elicitation.complete, () => undefined)
    .onRequest("*", ({ method, params, signal }) => guard(() => handlers.extensionRequest(method, params, signal)))
    .onNotification("*", ({ method, params, signal }) => handlers.extensionNotification(method, params, signal))
    .connect(stream);
}

/** Rejects with a `timeout` error when `promise` takes longer than `ms`. */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new SwitchyardError("timeout", `${what} did not answer within ${ms} ms.`, { timeoutMs: ms })),
      ms,
    );
    timer.unref?.();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Sends `initialize` and returns the agent's answer. */
export function initializeAgent(
  connection: acp.ClientConnection,
  hostVersion: string,
  timeoutMs: number,
): Promise<acp.InitializeResponse> {
  return withTimeout(
    connection.agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: ACP_CLIENT_CAPABILITIES,
      clientInfo: { name: "switchyard", version: hostVersion },
    }),
    timeoutMs,
    "The agent's initialize",
  );
}

/**
 * Sends `authenticate` with `methodId` when the agent lists auth methods and a method was
 * chosen; without a choice the agent's own cached login is used. A method the agent does not
 * offer, or a failed authentication, is `provider_unavailable`.
 * @public
 */
export async function authenticateAgent(
  connection: acp.ClientConnection,
  init: acp.InitializeResponse,
  methodId: string | undefined,
  timeoutMs: number,
): Promise<void> {
  const authMethods = init.authMethods ?? [];
  if (authMethods.length === 0 || methodId === undefined) return;
  const offered = authMethods.map((method) => method.id);
  if (!offered.includes(methodId)) {
    throw new SwitchyardError(
      "provider_unavailable",
      `Auth method "${methodId}" is not offered by the agent (offered: ${offered.join(", ")}). Set one of those as the instance's auth method.`,
      { methodId, offered },
    );
  }
  try {
    await withTimeout(
      connection.agent.request(acp.methods.agent.authenticate, { methodId }),
      timeoutMs,
      "The agent's authenticate",
    );
  } catch (error) {
    throw new SwitchyardError(
      "provider_unavailable",
      `Authentication with method "${methodId}" failed: ${describeError(error).message}`,
      { methodId },
    );
  }
}

/** JSON-RPC error code of ACP's `auth_required`. */
export const ACP_AUTH_REQUIRED = -32000;

/**
 * Sends `session/new`. An `auth_required` answer becomes `provider_unavailable` naming the
 * agent's auth methods (`details.authRequired: true`); any other refusal is `provider_error`.
 * @public
 */
export async function openNewSession(
  connection: acp.ClientConnection,
  request: acp.NewSessionRequest,
  init: acp.InitializeResponse,
  displayName: string,
  timeoutMs: number,
): Promise<acp.NewSessionResponse> {
  try {
    return await withTimeout(
      connection.agent.request(acp.methods.agent.session.new, request),
      timeoutMs,
      "The agent's session/new",
    );
  } catch (error) {
    if (error instanceof acp.RequestError && error.code === ACP_AUTH_REQUIRED) {
      const methods = (init.authMethods ?? []).map((method) => method.id);
      const agentName = init.agentInfo?.title ?? init.agentInfo?.name ?? displayName;
      throw new SwitchyardError(
        "provider_unavailable",
        `Agent "${agentName}" requires authentication (methods: ${methods.join(", ") || "none listed"}). ` +
          "Log in with the agent's own CLI, or configure the auth method the adapter should use.",
        { authMethods: methods, authRequired: true },
      );
    }
    if (hasErrorCode(error)) throw error;
    throw new SwitchyardError(
      "provider_error",
      `The agent refused session/new: ${describeError(error).message}`,
      describeError(error),
    );
  }
}

/**
 * The environment an agent starts with: the instance's, then a session's profile environment
 * (given only where the flavor declares `sessions.environment`), then the launch command's
 * (the flavor's own variables, such as its home, win).
 */
export function launchEnv(
  instanceEnv: Readonly<Record<string, string>>,
  launch: AcpLaunchCommand,
  sessionEnv: Readonly<Record<string, string>> = {},
): Record<string, string> {
  return { ...instanceEnv, ...sessionEnv, ...(launch.env ?? {}) };
}

/** Waits one macrotask, so every message received so far has reached its handler. @public */
export function settleInbound(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** A promise chain that runs tasks one at a time, in the order they were queued. @public */
export class SerialQueue {
  private tail: Promise<void> = Promise.resolve();

  constructor(private readonly onError: (error: unknown) => void) {}

  /** Queues `task`; the returned promise settles when it has run (never rejects). */
  run(task: () => void | Promise<void>): Promise<void> {
    const next = this.tail.then(task).catch(this.onError);
    this.tail = next;
    return next;
  }

  /** Queues `task` and settles with its result or its error; the queue goes on either way. */
  call<T>(task: () => T | Promise<T>): Promise<T> {
    const result = this.tail.then(task);
    this.tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }
}

/** Describes a JSON-RPC or other error for a turn or log line. */
export function describeError(error: unknown): { code?: string; message: string } {
  if (error instanceof acp.RequestError) {
    // Agents often put the useful part in `data` ("Internal error" + `{details: "No previous sessions found"}`).
    const data = error.data as { details?: unknown; message?: unknown } | string | undefined;
    const detail =
      typeof data === "string"
        ? data
        : typeof data?.details === "string"
          ? data.details
          : typeof data?.message === "string"
            ? data.message
            : undefined;
    return {
      code: String(error.code),
      message: detail !== undefined && detail !== error.message ? `${error.message} (${detail})` : error.message,
    };
  }
  if (hasErrorCode(error)) return { code: error.code, message: error.message };
  if (typeof error === "object" && error !== null && "code" in error && "message" in error) {
    const { code, message } = error as { code: unknown; message: unknown };
    return { code: String(code), message: String(message) };
  }
  return { message: error instanceof Error ? error.message : String(error) };
}
