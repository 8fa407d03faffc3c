import {
  JsonRpcRequestError,
  SwitchyardError,
  withStderrTail,
  type OpenSessionInput,
  type PluginContext,
  type PluginLogger,
  type ProviderInstanceDescriptor,
} from "@switchyard/sdk";
import type { JsonValue } from "../codex-wire.js";
import type { CodexBinary } from "../shared/codex-binary.js";
import { codexEnvironment } from "../shared/codex-environment.js";
import { codexThreadMcpConfig } from "../shared/codex-mcp-config.js";
import type { CodexOptions } from "../shared/codex-options.js";
import { appServerModeSettings } from "../shared/codex-runtime-modes.js";
import { CodexRpc, type CodexRpcOptions } from "../shared/codex-rpc.js";

/** What starting an app-server for a session needs. */
export interface CodexLaunchDeps {
  readonly instance: ProviderInstanceDescriptor;
  readonly options: CodexOptions;
  readonly context: PluginContext;
  readonly binary: CodexBinary;
  readonly logger: PluginLogger;
}

/** Names the app-server in errors, logs and the host's process table. */
export const APP_SERVER_LABEL = "codex app-server";

/**
 * Starts `codex app-server` for a session in its own process group, with the complete
 * environment (the MCP token only there, never in argv).
 */
export function spawnAppServer(
  deps: CodexLaunchDeps,
  input: OpenSessionInput,
  handlers: Pick<CodexRpcOptions, "onNotification" | "onRequest">,
): CodexRpc {
  const child = deps.context.process.spawn(deps.binary.command, ["app-server"], {
    cwd: input.cwd,
    env: codexEnvironment({ instance: deps.instance, binary: deps.binary, grant: input.mcp, session: input }),
    extendEnv: false,
    stdin: "pipe",
    label: APP_SERVER_LABEL,
  });
  deps.logger.info("codex app-server started", {
    pid: child.pid,
    command: deps.binary.command,
    mcp: input.mcp !== null,
  });
  return new CodexRpc(child, { label: APP_SERVER_LABEL, logger: deps.logger, ...handlers });
}

/** A JSON-RPC error, a timeout or the app-server's death while it started, with its stderr. */
function startFailure(step: string, error: unknown, rpc: CodexRpc): SwitchyardError {
  if (error instanceof SwitchyardError && error.code !== "session_closed") {
    return new SwitchyardError(
      error.code,
      withStderrTail(error.message, rpc.channel.stderr),
      error.details === undefined ? undefined : { ...error.details },
    );
  }
  const message = error instanceof Error ? error.message : String(error);
  return new SwitchyardError(
    "provider_unavailable",
    withStderrTail(`codex app-server failed during ${step}: ${message}`, rpc.channel.stderr),
    { step },
  );
}

/** The Codex thread a session opened, and the model Codex resolved for it (its config's when the host named none). */
export interface OpenedCodexThread {
  readonly threadId: string;
  readonly created: boolean;
  readonly model: string | null;
}

/**
 * The handshake, then the session's Codex thread: `thread/resume` of `resumeCursor`, else a new
 * `thread/start`. Either passes the thread config again (Codex does not keep it): the runtime
 * mode and the Switchyard MCP entries, which win over the instance's `config`.
 */
export async function openCodexThread(
  rpc: CodexRpc,
  deps: CodexLaunchDeps,
  input: OpenSessionInput,
  resumeCursor: string | null,
): Promise<OpenedCodexThread> {
  const timeout = deps.options.requestTimeoutMs;
  await rpc.initialize(deps.context.hostVersion, timeout).catch((error: unknown) => {
    throw startFailure("initialize", error, rpc);
  });
  const mode = appServerModeSettings(input.runtimeMode);
  // A JSON copy: the wire type is JsonValue (no readonly arrays).
  const config = JSON.parse(JSON.stringify({ ...deps.options.config, ...codexThreadMcpConfig(input.mcp) })) as Record<
    string,
    JsonValue
  >;
  // Only the names of the injected servers are logged; the token is in the child's env only.
  deps.logger.debug("codex thread config", {
    mcpServers: Object.keys(config).filter((key) => key.startsWith("mcp_servers.")),
  });
  const thread = {
    cwd: input.cwd,
    approvalPolicy: mode.approvalPolicy,
    sandbox: mode.sandbox,
    config,
    ...(input.model ? { model: input.model } : {}),
  };
  if (resumeCursor !== null) {
    const resumed = await rpc
      .request("thread/resume", { threadId: resumeCursor, ...thread, excludeTurns: true }, timeout)
      .catch((error: unknown) => {
        if (error instanceof JsonRpcRequestError && /no rollout found|invalid session id/i.test(error.message)) {
          throw new SwitchyardError(
            "not_found",
            `Codex has no thread "${resumeCursor}" to resume in this CODEX_HOME.`,
            { resumeCursor },
          );
        }
        throw startFailure("thread/resume", error, rpc);
      });
    return { threadId: resumed.thread.id, created: false, model: resumed.model || null };
  }
  const started = await rpc.request("thread/start", thread, timeout).catch((error: unknown) => {
    throw startFailure("thread/start", error, rpc);
  });
  return { threadId: started.thread.id, created: true, model: started.model || null };
}
