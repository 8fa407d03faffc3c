import { constants, accessSync, statSync } from "node:fs";
import { delimiter, join } from "node:path";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { execa } from "execa";
import { HOST_VERSION } from "../util/host-version.js";
import type { McpSessionRegistry } from "../services/credentials/mcp-session-registry.js";
import type { ConnectionRecord } from "./connection-records.js";
import { credentialState, type ConnectionService } from "./connection-service.js";
import type { ConnectionTarget } from "./harness-connector.js";
import type { RunningServerInfo } from "./running-server.js";

/** One step of `--check` and what it found. */
export interface CheckStep {
  readonly name: "entry" | "secret" | "shell" | "token" | "server" | "mcp" | "change" | "harness";
  /** `skipped`: could not be looked at (no server, no harness binary); not a failure by itself. */
  readonly status: "ok" | "failed" | "skipped";
  readonly detail: string;
}

/** The verdict of `--check`: every step, and whether the connection works. */
export interface CheckVerdict {
  readonly ok: boolean;
  readonly steps: readonly CheckStep[];
}

/** Finds an executable on a PATH. */
function onPath(command: string, path: string | undefined): string | null {
  for (const dir of (path ?? "").split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, command);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

type ToolAnswer = { isError?: boolean; structuredContent?: Record<string, unknown>; content?: { text?: string }[] };

/** A typed failure's code and message from a tool's error result. */
function failureOf(result: ToolAnswer): string {
  const text = result.content?.[0]?.text ?? "(no text)";
  try {
    const { error } = JSON.parse(text) as { error: { code: string; message: string } };
    return `${error.code}: ${error.message}`;
  } catch {
    return text;
  }
}

/**
 * Calls `orchestrator_capabilities` with the connection's token, as the harness would, then (for
 * a token that may operate) a harmless change: an idle thread created where the harness's work
 * would go (the check's roots are the folder it runs in) and settled at once, the same one on
 * every check (its retry key), so a scope or project problem shows before an agent meets it.
 */
async function callTools(url: string, token: string, options: { operate: boolean; cwd: string }): Promise<CheckStep[]> {
  const client = new Client(
    { name: "switchyard-connect-check", version: HOST_VERSION },
    { capabilities: { roots: {} } },
  );
  client.setRequestHandler(ListRootsRequestSchema, () => ({
    roots: [{ uri: pathToFileURL(options.cwd).href, name: options.cwd }],
  }));
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  try {
    await client.connect(transport);
    const result = (await client.callTool({ name: "orchestrator_capabilities", arguments: {} })) as ToolAnswer;
    if (result.isError)
      return [
        { name: "mcp", status: "failed", detail: `orchestrator_capabilities answered an error: ${failureOf(result)}` },
      ];
    const providers = Array.isArray(result.structuredContent?.providers)
      ? (result.structuredContent.providers as { providerInstanceId?: string; canRunChildTasks?: boolean }[])
      : [];
    const steps: CheckStep[] = [
      { name: "mcp", status: "ok", detail: `orchestrator_capabilities answered (${providers.length} provider(s))` },
    ];
    if (!options.operate) {
      steps.push({
        name: "change",
        status: "skipped",
        detail: "the token may only read (--verbs read), so nothing was changed",
      });
      return steps;
    }
    const target = providers.find((provider) => provider.canRunChildTasks === true)?.providerInstanceId;
    if (target === undefined) {
      steps.push({
        name: "change",
        status: "skipped",
        detail: "no provider can run work yet, so no thread was created to try a change",
      });
      return steps;
    }
    const created = (await client.callTool({
      name: "create_threads",
      arguments: {
        threads: [{ title: "switchyard connect --check", target: { providerInstanceId: target } }],
        clientRequestId: "switchyard-connect-check",
      },
    })) as ToolAnswer;
    if (created.isError) {
      steps.push({
        name: "change",
        status: "failed",
        detail: `create_threads (an idle thread, as a delegation would) was refused: ${failureOf(created)}`,
      });
      return steps;
    }
    const thread = (
      created.structuredContent?.threads as { thread: { threadId: string; projectId: string } }[] | undefined
    )?.[0]?.thread;
    const settled = (await client.callTool({
      name: "set_thread_settled",
      arguments: { threadId: thread?.threadId ?? "", settled: true },
    })) as ToolAnswer;
    steps.push(
      settled.isError
        ? { name: "change", status: "failed", detail: `set_thread_settled was refused: ${failureOf(settled)}` }
        : {
            name: "change",
            status: "ok",
            detail: `created and settled an idle thread in project ${thread?.projectId} (${thread?.threadId})`,
          },
    );
    return steps;
  } catch (error) {
    if (error instanceof StreamableHTTPError && error.code === 401) {
      return [
        {
          name: "mcp",
          status: "failed",
          detail: `the server refused the token (HTTP 401): it is revoked, expired or from another home. Run \`switchyard connect\` again for a new one.`,
        },
      ];
    }
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as NodeJS.ErrnoException).code;
    if (cause === "ECONNREFUSED")
      return [
        {
          name: "mcp",
          status: "failed",
          detail: `nothing listens at ${url} (ECONNREFUSED). Start it with \`switchyard serve\`.`,
        },
      ];
    return [{ name: "mcp", status: "failed", detail: `the call failed: ${(error as Error).message}` }];
  } finally {
    await client.close().catch(() => undefined);
  }
}

/**
 * Checks a connection end to end: the entry is still as written, the secret file is the user's
 * alone, the token is active, the server runs at the entry's URL and answers
 * `orchestrator_capabilities` with that token, and, where the harness's binary is on PATH, the
 * harness itself lists (or connects to) the entry.
 */
export async function checkConnection(input: {
  service: ConnectionService;
  registry: McpSessionRegistry;
  record: ConnectionRecord;
  server: RunningServerInfo | null;
  toolTimeoutMs: number;
  /** The environment of the shell that runs the check (the one the harness would start in). */
  env: NodeJS.ProcessEnv;
  /** The folder the check runs in (the harness's work would go to its project); default the process's. */
  cwd?: string;
}): Promise<CheckVerdict> {
  const { service, record, server } = input;
  const steps: CheckStep[] = [];
  const entry = service.entryState(record, input.toolTimeoutMs);
  steps.push({
    name: "entry",
    status: entry === "as-written" ? "ok" : "failed",
    detail:
      entry === "as-written"
        ? `${record.configFile} has "${record.serverName}"`
        : entry === "missing"
          ? `${record.configFile} has no "${record.serverName}" entry any more; run \`switchyard connect ${record.harness}\` again`
          : entry === "unreadable"
            ? `${record.configFile} no longer parses; fix it, then run \`switchyard connect ${record.harness}\` again`
            : `"${record.serverName}" in ${record.configFile} differs from what connect wrote (URL, port or settings changed); run \`switchyard connect ${record.harness}\` again`,
  });
  const token = service.tokenOf(record);
  let mode: number | null = null;
  try {
    mode = statSync(record.secretFile).mode & 0o777;
  } catch {
    // missing
  }
  steps.push(
    token === null
      ? {
          name: "secret",
          status: "failed",
          detail: `the token file ${record.secretFile} is missing or empty; run \`switchyard connect ${record.harness}\` again`,
        }
      : mode !== 0o600
        ? {
            name: "secret",
            status: "failed",
            detail: `${record.secretFile} can be read by others (mode ${mode?.toString(8)}); run chmod 600 on it`,
          }
        : { name: "secret", status: "ok", detail: `${record.secretFile} (mode 600)` },
  );
  if (record.envVar !== null) steps.push(shellStep(input.service, record, token, input.env));
  const state = await credentialState(input.registry, record.credentialId);
  steps.push({
    name: "token",
    status: state === "active" ? "ok" : "failed",
    detail:
      state === "active"
        ? `${record.credentialId} is active`
        : `${record.credentialId} is ${state}; run \`switchyard connect ${record.harness}\` again for a new one`,
  });
  if (server === null) {
    steps.push({
      name: "server",
      status: "failed",
      detail: `no Switchyard server runs on ${service.homeDir}; start it with \`switchyard serve\``,
    });
  } else if (server.mcpUrl !== record.url) {
    steps.push({
      name: "server",
      status: "failed",
      detail: `the server listens at ${server.mcpUrl}, the entry points at ${record.url}; run \`switchyard connect ${record.harness}\` again`,
    });
  } else {
    steps.push({ name: "server", status: "ok", detail: `running at ${server.mcpUrl} (pid ${server.pid})` });
  }
  if (token !== null)
    steps.push(
      ...(await callTools(record.url, token, {
        operate: record.grant.verbs.includes("operate"),
        cwd: record.projectDir ?? input.cwd ?? process.cwd(),
      })),
    );
  else steps.push({ name: "mcp", status: "skipped", detail: "no token to call with" });
  steps.push(await harnessLook(input));
  return { ok: steps.every((step) => step.status !== "failed"), steps };
}

/** The harness's own look at the entry (`codex mcp list`, `claude mcp list`, …), run where it is installed. */
async function harnessLook(input: {
  service: ConnectionService;
  record: ConnectionRecord;
  env: NodeJS.ProcessEnv;
}): Promise<CheckStep> {
  const { record } = input;
  const connector = input.service.connector(record.harness);
  const target: ConnectionTarget = {
    scope: record.scope,
    projectDir: record.projectDir ?? process.cwd(),
    env: input.env,
  };
  if (connector.selfCheck === undefined)
    return {
      name: "harness",
      status: "skipped",
      detail: `${connector.displayName} has no command that lists its MCP servers`,
    };
  const look = connector.selfCheck(target);
  const binary = onPath(look.command, input.env.PATH);
  if (binary === null)
    return {
      name: "harness",
      status: "skipped",
      detail: `${look.command} is not on PATH, so ${connector.displayName} was not asked`,
    };
  // The harness runs with this shell's environment, as it would when you start it here: a token
  // variable env.sh did not set is missing for it too (the shell step says so).
  const env: Record<string, string> = { ...(connector.checkEnvironment?.(target) ?? {}) };
  const result = await execa(binary, [...look.args], {
    reject: false,
    cwd: record.projectDir ?? process.cwd(),
    env: { ...input.env, ...env },
    extendEnv: false,
    stdin: "ignore",
    timeout: 120_000,
  });
  const verdict = look.interpret(
    { stdout: String(result.stdout), stderr: String(result.stderr), exitCode: result.exitCode ?? null },
    record.serverName,
  );
  return {
    name: "harness",
    status: verdict.ok ? "ok" : "failed",
    detail: `${look.command} ${look.args.join(" ")}: ${verdict.detail}`,
  };
}

/**
 * Whether the token is where the harness looks for it: the variable its entry names, in the
 * environment of the shell the check (and so the harness) runs in, set from the token file by
 * env.sh.
 */
function shellStep(
  service: ConnectionService,
  record: ConnectionRecord,
  token: string | null,
  env: NodeJS.ProcessEnv,
): CheckStep {
  const envSh = `${service.records.dir}/env.sh`;
  const value = env[record.envVar!];
  if (value === undefined || value === "") {
    return {
      name: "shell",
      status: "failed",
      detail: `$${record.envVar} is not set in this shell, and ${service.connector(record.harness).displayName} reads the token from it: run \`. ${envSh}\` (and add that line to your shell profile), then check again`,
    };
  }
  if (token !== null && value !== token) {
    return {
      name: "shell",
      status: "failed",
      detail: `$${record.envVar} holds another token than ${record.secretFile} (an old one): run \`. ${envSh}\` again, or open a new shell`,
    };
  }
  return { name: "shell", status: "ok", detail: `$${record.envVar} is set from ${record.secretFile} (by ${envSh})` };
}
