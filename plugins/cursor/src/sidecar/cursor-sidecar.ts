/**
 * The Cursor sidecar: a process on Node ≥ 22.13 that owns the Cursor SDK for one provider
 * session (`Agent.create` / `Agent.resume`, `send`, `steer`, `cancel`) and speaks JSON-RPC 2.0
 * with the plugin over stdio, one message per line. stdout carries the protocol and nothing
 * else: whatever the SDK prints goes to stderr, whose tail the host keeps for error messages.
 * Secrets (the Switchyard bearer header inside `mcpServers`) arrive in request params over
 * stdin, the Cursor API key in the environment; neither is ever printed.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { LineSplitter } from "@switchyard/sdk";
import type * as CursorSdkModule from "@cursor/sdk";
import type { Run, SDKAgent } from "@cursor/sdk";
import type * as CursorSqliteModule from "@cursor/sdk/sqlite";
import type { SqliteLocalAgentStore } from "@cursor/sdk/sqlite";
import {
  SIDECAR_METHODS,
  SIDECAR_NOTIFICATIONS,
  type CancelParams,
  type InitializeParams,
  type InitializeResult,
  type ModelsResult,
  type OpenAgentParams,
  type OpenAgentResult,
  type RunEndedNotification,
  type RunMessageNotification,
  type SendParams,
  type SendResult,
  type SidecarErrorData,
  type SidecarErrorKind,
  type SteerParams,
  type SteerResult,
} from "../cursor-wire.js";

for (const method of ["log", "info", "debug", "warn", "trace"] as const) console[method] = console.error;

type CursorSdk = typeof CursorSdkModule;
type CursorSqliteStores = typeof CursorSqliteModule;

let sdk: CursorSdk | null = null;
let sqliteStores: CursorSqliteStores | null = null;
let store: SqliteLocalAgentStore | null = null;
let agent: SDKAgent | null = null;
let current: { readonly turnId: string; readonly run: Run } | null = null;

function write(message: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
}

function notify(method: string, params: RunMessageNotification | RunEndedNotification): void {
  write({ method, params });
}

/** A JSON-RPC error the plugin turns into a typed Switchyard error. */
class SidecarError extends Error {
  constructor(
    message: string,
    readonly data: SidecarErrorData,
  ) {
    super(message);
  }
}

function classify(error: unknown): SidecarErrorData {
  if (error instanceof SidecarError) return error.data;
  const known = error as { code?: unknown; status?: unknown; isRetryable?: unknown };
  let kind: SidecarErrorKind = "unknown";
  if (sdk !== null) {
    if (error instanceof sdk.AgentBusyError) kind = "busy";
    else if (error instanceof sdk.AgentNotFoundError) kind = "not_found";
    else if (error instanceof sdk.AuthenticationError) kind = "authentication";
    else if (error instanceof sdk.RateLimitError) kind = "rate_limit";
    else if (error instanceof sdk.UnsupportedRunOperationError) kind = "unsupported";
    else if (error instanceof sdk.ConfigurationError) kind = "configuration";
    else if (error instanceof sdk.NetworkError) kind = "network";
  }
  return {
    kind,
    ...(typeof known.code === "string" ? { code: known.code } : {}),
    ...(typeof known.status === "number" ? { status: known.status } : {}),
    ...(typeof known.isRetryable === "boolean" ? { retryable: known.isRetryable } : {}),
  };
}

function loaded(): CursorSdk {
  if (sdk === null) throw new SidecarError("The sidecar was not initialized.", { kind: "configuration" });
  return sdk;
}

function loadedStores(): CursorSqliteStores {
  if (sqliteStores === null) throw new SidecarError("The sidecar was not initialized.", { kind: "configuration" });
  return sqliteStores;
}

function openAgent(): SDKAgent {
  if (agent === null) throw new SidecarError("No agent is open in this sidecar.", { kind: "configuration" });
  return agent;
}

function runOf(turnId: string): Run {
  if (current === null || current.turnId !== turnId)
    throw new SidecarError(`Turn "${turnId}" has no run in this sidecar.`, { kind: "not_found" });
  return current.run;
}

/** Streams a run's messages, then its result, as notifications. */
async function pump(turnId: string, run: Run): Promise<void> {
  try {
    for await (const message of run.stream()) notify(SIDECAR_NOTIFICATIONS.runMessage, { turnId, message });
    notify(SIDECAR_NOTIFICATIONS.runEnded, { turnId, result: await run.wait() });
  } catch (error) {
    notify(SIDECAR_NOTIFICATIONS.runEnded, {
      turnId,
      error: { message: (error as Error).message, ...classify(error) },
    });
  }
}

interface Handled {
  readonly result: unknown;
  /** Runs once the response is written (so a run's notifications never overtake its answer). */
  readonly after?: () => void;
}

async function handle(method: string, params: unknown): Promise<Handled> {
  switch (method) {
    case SIDECAR_METHODS.initialize: {
      const loadedSdk = await loadSdk((params as InitializeParams).sdkDir);
      ({ sdk, sqliteStores } = loadedSdk);
      const result: InitializeResult = { sdkVersion: loadedSdk.version, nodeVersion: process.version };
      return { result };
    }
    case SIDECAR_METHODS.openAgent: {
      const cursor = loaded();
      const input = params as OpenAgentParams;
      store = await loadedStores().SqliteLocalAgentStore.open({ workspaceRef: input.cwd, stateRoot: input.storeDir });
      const local = { cwd: input.cwd, store };
      const mcp = input.mcpServers !== null ? { mcpServers: input.mcpServers } : {};
      // A local agent needs a model on every run, and a resumed one does not remember its own
      // (`agent.model` stays unset until a send sets it): without one named, the catalog's first.
      const catalogFirst = async (): Promise<string> => {
        const model = (await cursor.Cursor.models.list())[0]?.id;
        if (model === undefined)
          throw new SidecarError(
            "Cursor's model catalog is empty, so the agent has no model; name one (the thread's model, or the instance's defaultModel option).",
            {
              kind: "configuration",
            },
          );
        return model;
      };
      let model: string;
      if (input.resume !== null) {
        agent = await cursor.Agent.resume(input.resume, {
          local,
          ...mcp,
          ...(input.model !== null ? { model: { id: input.model } } : {}),
        });
        model = input.model ?? agent.model?.id ?? (await catalogFirst());
      } else {
        model = input.model ?? (await catalogFirst());
        agent = await cursor.Agent.create({ model: { id: model }, local, ...mcp });
      }
      const result: OpenAgentResult = { agentId: agent.agentId, model };
      return { result };
    }
    case SIDECAR_METHODS.send: {
      const input = params as SendParams;
      const run = await openAgent().send(input.text, {
        model: { id: input.model },
        ...(input.mcpServers !== null ? { mcpServers: input.mcpServers } : {}),
      });
      current = { turnId: input.turnId, run };
      const result: SendResult = { runId: run.id };
      return { result, after: () => void pump(input.turnId, run) };
    }
    case SIDECAR_METHODS.steer: {
      const input = params as SteerParams;
      const run = runOf(input.turnId);
      // `run.supports("steer")` answers false (it only knows stream/wait/conversation/cancel),
      // but the method exists and the backend answers it.
      if (typeof run.steer !== "function")
        throw new SidecarError("This Cursor run has no steer method.", { kind: "unsupported" });
      const result: SteerResult = { outcome: await run.steer(input.text) };
      return { result };
    }
    case SIDECAR_METHODS.cancel: {
      await runOf((params as CancelParams).turnId).cancel();
      return { result: {} };
    }
    case SIDECAR_METHODS.listModels: {
      const models = await loaded().Cursor.models.list();
      const result: ModelsResult = {
        models: models.map((model) => ({
          id: model.id,
          ...(model.displayName ? { displayName: model.displayName } : {}),
        })),
      };
      return { result };
    }
    default:
      throw Object.assign(new SidecarError(`Unknown method ${method}.`, { kind: "unsupported" }), { rpcCode: -32601 });
  }
}

/** An `exports` entry's ESM file (`{ import, default }` or a plain path). */
function esmEntry(exported: unknown, name: string): string {
  const entry =
    typeof exported === "string"
      ? exported
      : ((exported as { import?: unknown; default?: unknown } | undefined)?.import ??
        (exported as { default?: unknown } | undefined)?.default);
  if (typeof entry !== "string")
    throw new SidecarError(`The @cursor/sdk package exports no "${name}" entry point.`, { kind: "configuration" });
  return entry;
}

/**
 * Imports the SDK from the folder the plugin found (the `sdkPath` option, beside the plugin, or
 * the Node's global packages), by the entry points its package.json exports.
 */
async function loadSdk(sdkDir: string): Promise<{ sdk: CursorSdk; sqliteStores: CursorSqliteStores; version: string }> {
  const manifest = JSON.parse(await readFile(join(sdkDir, "package.json"), "utf8")) as {
    name?: string;
    version?: string;
    exports?: Record<string, unknown>;
  };
  if (manifest.name !== "@cursor/sdk")
    throw new SidecarError(`${sdkDir} holds ${manifest.name ?? "a package without a name"}, not @cursor/sdk.`, {
      kind: "configuration",
    });
  const fileOf = (name: string): string => pathToFileURL(join(sdkDir, esmEntry(manifest.exports?.[name], name))).href;
  const [loadedSdk, loadedStores] = await Promise.all([
    import(fileOf(".")) as Promise<CursorSdk>,
    import(fileOf("./sqlite")) as Promise<CursorSqliteStores>,
  ]);
  return { sdk: loadedSdk, sqliteStores: loadedStores, version: manifest.version ?? "unknown" };
}

async function onRequest(id: number | string, method: string, params: unknown): Promise<void> {
  try {
    const handled = await handle(method, params);
    write({ id, result: handled.result ?? null });
    handled.after?.();
  } catch (error) {
    const rpcCode = (error as { rpcCode?: number }).rpcCode ?? -32000;
    write({
      id,
      error: { code: rpcCode, message: error instanceof Error ? error.message : String(error), data: classify(error) },
    });
  }
}

async function shutdown(): Promise<void> {
  try {
    if (current !== null && current.run.status === "running") await current.run.cancel().catch(() => undefined);
    agent?.close();
    await store?.dispose();
  } finally {
    process.exit(0);
  }
}

const splitter = new LineSplitter();
process.stdin.on("data", (chunk: Buffer) => {
  for (const line of splitter.push(chunk)) {
    if (line.trim() === "") continue;
    let message: { id?: number | string; method?: string; params?: unknown };
    try {
      message = JSON.parse(line) as typeof message;
    } catch {
      console.error("cursor sidecar: a line on stdin is not JSON");
      continue;
    }
    if (typeof message.method === "string" && message.id !== undefined)
      void onRequest(message.id, message.method, message.params);
  }
});
// The plugin ends the session by closing stdin.
process.stdin.on("end", () => void shutdown());
