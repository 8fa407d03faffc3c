import {
  SwitchyardError,
  withStderrTail,
  type McpEndpointGrant,
  type OpenSessionInput,
  type PluginContext,
  type PluginLogger,
  type ProviderInstanceDescriptor,
} from "@switchyard/sdk";
import { EXTENSION_ENV } from "./pi-extension/switchyard-extension.js";
import { mcpEnvironment, piArgs, piEnvironment, type PiBinary } from "./pi-launch.js";
import type { PiOptions } from "./pi-options.js";
import { PiRpcClient } from "./pi-rpc-client.js";
import type { PiRpcInbound, PiSessionState } from "./pi-wire.js";

/** One running `pi --mode rpc` process of a session. */
export interface PiRuntime {
  /** Counts the session's processes: messages and dialogs of an older one are ignored. */
  readonly generation: number;
  readonly client: PiRpcClient;
  /** The `--model` it was started with (null: the session's or Pi's default). */
  readonly model: string | null;
  /** The `--thinking` level it was started with (null: the session's or Pi's default). */
  readonly thinking: string | null;
  /** Set when the adapter itself stops the process (no `session.exited` for that). */
  retiring: boolean;
}

/** What one Pi process is started with. */
export interface PiProcessInput {
  readonly instance: ProviderInstanceDescriptor;
  /** The session's profile settings: its harness home (Pi's agent directory) and environment. */
  readonly session: Pick<OpenSessionInput, "environment" | "harnessHome">;
  readonly options: PiOptions;
  readonly context: PluginContext;
  readonly binary: PiBinary;
  readonly extensionPath: string;
  readonly logger: PluginLogger;
  readonly cwd: string;
  readonly sessionDir: string;
  /** The session file to reopen, or null for a fresh one. */
  readonly sessionFile: string | null;
  readonly model: string | null;
  readonly thinking: string | null;
  readonly grant: McpEndpointGrant | null;
  /** The state file the extension reads (runtime mode, rotated token). */
  readonly stateFile: string;
  readonly generation: number;
  /** Every event and dialog Pi writes, in order. */
  onMessage(message: PiRpcInbound): void;
}

/**
 * Starts Pi and waits until it answers: Pi prints nothing when ready, so its answer to
 * `get_state` is the signal. A Pi that dies or stays silent is stopped and reported as
 * `provider_unavailable`, with the end of its stderr.
 */
export async function launchPi(
  input: PiProcessInput,
): Promise<{ readonly runtime: PiRuntime; readonly state: PiSessionState }> {
  const { binary, options } = input;
  const args = piArgs({
    binary,
    options,
    sessionDir: input.sessionDir,
    sessionFile: input.sessionFile,
    model: input.model,
    thinking: input.thinking,
    extensionPath: input.extensionPath,
  });
  const env = piEnvironment(
    input.instance,
    { ...mcpEnvironment(input.grant), [EXTENSION_ENV.stateFile]: input.stateFile },
    input.session,
  );
  const managed = input.context.process.spawn(binary.command, args, {
    cwd: input.cwd,
    env,
    extendEnv: false,
    stdin: "pipe",
    label: "pi rpc",
  });
  const client = new PiRpcClient(managed, input.logger, input.onMessage);
  const runtime: PiRuntime = {
    generation: input.generation,
    client,
    model: input.model,
    thinking: input.thinking,
    retiring: false,
  };
  input.logger.info("pi started", {
    pid: managed.pid,
    resumed: input.sessionFile !== null,
    mcp: input.grant !== null,
    model: input.model,
  });
  try {
    return { runtime, state: await client.call<PiSessionState>({ type: "get_state" }, options.startupTimeoutMs) };
  } catch (error) {
    runtime.retiring = true;
    await client.stop(500);
    const message = withStderrTail(`pi did not start: ${(error as Error).message}`, client.channel.stderr);
    input.logger.warn("pi failed to start", { message });
    throw new SwitchyardError("provider_unavailable", message, { pid: managed.pid });
  }
}
