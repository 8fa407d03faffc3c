import type { Command } from "commander";
import { InvalidArgumentError } from "commander";
import { runningServer } from "../../connect/running-server.js";
import { McpSessionRegistry } from "../../services/credentials/mcp-session-registry.js";
import { parseDuration } from "../duration.js";
import { withHost } from "../open-host.js";
import { CliError, EXIT, printJson, printTable, style } from "../output.js";

/** The session token a terminal command holds while it runs; revoked when it ends. */
const SESSION_TOKEN_TTL_MS = 15 * 60_000;
/** How long `threads wait` waits in all (each request is capped by the server's maxWaitMs). */
const DEFAULT_WAIT_MS = 10 * 60_000;

const SEND_MODES = ["auto", "queue", "steer", "restart"] as const;
type SendMode = (typeof SEND_MODES)[number];

function parseSendMode(value: string): SendMode {
  if ((SEND_MODES as readonly string[]).includes(value)) return value as SendMode;
  throw new InvalidArgumentError(`"${value}" is not a send mode; use ${SEND_MODES.join(", ")}.`);
}

interface ThreadShell {
  threadId: string;
  title: string;
  projectId: string;
  providerInstanceId: string;
  model: string | null;
  status: string;
  queuedRuns: number;
  relationship: string;
  updatedAt?: string;
}

/** The server's HTTP API, called with a token that exists only for this command. */
class TerminalApi {
  constructor(
    private readonly baseUrl: string,
    private readonly token: string,
  ) {}

  async call<T>(method: "GET" | "POST", path: string, body?: unknown): Promise<T> {
    let response: Response;
    try {
      response = await fetch(`${this.baseUrl}/api/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${this.token}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
    } catch (error) {
      throw new CliError(`Cannot reach the Switchyard server at ${this.baseUrl} (${(error as Error).message}). Is it still running? \`switchyard status\` says.`, EXIT.failed);
    }
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = null;
    }
    if (!response.ok) {
      const failure = (parsed as { error?: { code?: string; message?: string } } | null)?.error;
      const code = failure?.code ?? `http_${response.status}`;
      const exit = response.status === 404 || code.endsWith("not_found") ? EXIT.notFound : response.status === 400 || code === "invalid_request" ? EXIT.usage : EXIT.failed;
      throw new CliError(`${code}: ${failure?.message ?? text}`, exit);
    }
    return parsed as T;
  }
}

/**
 * Runs `fn` against the server running on the home, with a client token issued for this one
 * command (never printed, never in argv) and revoked when it ends. The person at the terminal
 * owns the home, so the token has every verb but approve and the broadest ceiling.
 */
async function withServer<T>(options: { home?: string }, fn: (api: TerminalApi) => Promise<T>): Promise<T> {
  return withHost(options, async (host) => {
    const server = runningServer(host.paths.home);
    if (server === null) throw new CliError(`No Switchyard server runs on ${host.paths.home}. Start it with \`switchyard serve\`; threads live in the running server.`, EXIT.failed);
    const registry = host.container.resolve(McpSessionRegistry);
    const issued = registry.issueClientToken({ ttlMs: SESSION_TOKEN_TTL_MS, capabilities: ["orchestration:read", "orchestration:operate"], label: "switchyard threads (this terminal command)" });
    try {
      return await fn(new TerminalApi(server.url, issued.token));
    } finally {
      registry.revoke(issued.id);
    }
  });
}

function statusText(status: string): string {
  const color = status === "completed" ? "green" : status === "failed" ? "red" : status === "running" || status === "waiting" || status === "queued" ? "yellow" : "dim";
  return style(status, color);
}

export function registerThreads(program: Command): void {
  const threads = program.command("threads").description("Threads for a person at a terminal: list, read, send a message, wait for a run (talks to the running server)");

  threads
    .command("list")
    .description("Threads of every project (or --project), newest first")
    .option("--project <id>", "only this project's threads")
    .option("--status <status>", "only threads whose latest run has this status (idle, queued, running, waiting, completed, failed, cancelled, interrupted)")
    .option("--subagents", "include delegated child threads")
    .option("--limit <n>", "at most this many per project (default 50)", (value) => {
      const n = Number(value);
      if (!Number.isInteger(n) || n < 1 || n > 100) throw new InvalidArgumentError("--limit takes a whole number from 1 to 100.");
      return n;
    })
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(async (options: { project?: string; status?: string; subagents?: boolean; limit?: number; home?: string; json?: boolean }) => {
      await withServer(options, async (api) => {
        const projectIds = options.project !== undefined ? [options.project] : (await api.call<{ projects: { projectId: string }[] }>("GET", "/projects")).projects.map((p) => p.projectId);
        const all: ThreadShell[] = [];
        for (const projectId of projectIds) {
          const query = new URLSearchParams({ projectId, limit: String(options.limit ?? 50) });
          if (options.status) query.set("runStatus", options.status);
          if (options.subagents) query.set("includeSubagents", "true");
          all.push(...(await api.call<{ threads: ThreadShell[] }>("GET", `/threads?${query.toString()}`)).threads);
        }
        if (options.json) {
          printJson(all);
          return;
        }
        if (all.length === 0) {
          process.stdout.write(projectIds.length === 0 ? "No projects yet. Add one with: switchyard project add <folder>\n" : "No threads.\n");
          return;
        }
        printTable(
          ["THREAD", "TITLE", "PROVIDER", "STATUS", "QUEUED", "KIND"],
          all.map((t) => [t.threadId, t.title.length > 48 ? `${t.title.slice(0, 47)}…` : t.title, t.model ? `${t.providerInstanceId}/${t.model}` : t.providerInstanceId, statusText(t.status), String(t.queuedRuns), t.relationship]),
        );
      });
    });

  threads
    .command("read <threadId>")
    .description("A thread's state and its recent messages")
    .option("--max-chars <n>", "at most this many characters of timeline (default 30000)", (value) => {
      const n = Number(value);
      if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("--max-chars takes a positive whole number.");
      return n;
    })
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(async (threadId: string, options: { maxChars?: number; home?: string; json?: boolean }) => {
      await withServer(options, async (api) => {
        const query = options.maxChars !== undefined ? `?maxChars=${options.maxChars}` : "";
        const read = await api.call<{ thread: ThreadShell; items: { kind: string; role: string | null; text: string; status: string; createdAt: string }[]; hasMore: boolean }>(
          "GET",
          `/threads/${encodeURIComponent(threadId)}${query}`,
        );
        if (options.json) {
          printJson(read);
          return;
        }
        const t = read.thread;
        const lines = [`${style(t.title, "bold")} (${t.threadId})`, `  ${t.providerInstanceId}${t.model ? `/${t.model}` : ""}, ${statusText(t.status)}${t.queuedRuns > 0 ? `, ${t.queuedRuns} queued` : ""}`, ""];
        for (const item of read.items) {
          const who = item.role ?? item.kind;
          lines.push(`${style(`[${who}]`, item.role === "user" ? "bold" : "dim")} ${item.text}`);
        }
        if (read.hasMore) lines.push(style("(more: --json shows the paging positions)", "dim"));
        process.stdout.write(`${lines.join("\n")}\n`);
      });
    });

  threads
    .command("send <threadId> <message>")
    .description("Send a message to a thread: it starts a turn, queues, or steers the running one (--mode)")
    .option("--mode <mode>", `auto (default: start, or steer a running turn the way the provider can), ${SEND_MODES.slice(1).join(", ")}`, parseSendMode)
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(async (threadId: string, message: string, options: { mode?: SendMode; home?: string; json?: boolean }) => {
      if (message.trim() === "") throw new CliError("The message is empty; say what the thread should do.", EXIT.usage);
      await withServer(options, async (api) => {
        const sent = await api.call<{ runId: string; delivery: string; degraded: boolean; reason: string }>("POST", `/threads/${encodeURIComponent(threadId)}/messages`, {
          message,
          mode: options.mode ?? "auto",
        });
        if (options.json) printJson(sent);
        else process.stdout.write(`${sent.delivery} (run ${sent.runId})${sent.degraded ? style(` degraded: ${sent.reason}`, "yellow") : ""}\nWait for it with: switchyard threads wait ${threadId} --run ${sent.runId}\n`);
      });
    });

  threads
    .command("wait <threadId>")
    .description("Wait until a run of the thread ends (the latest without --run) and print its summary")
    .option("--run <runId>", "the run to wait for")
    .option("--timeout <duration>", "give up after this long, e.g. 30s, 10m (default 10m); the run goes on", parseDuration)
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(async (threadId: string, options: { run?: string; timeout?: number; home?: string; json?: boolean }) => {
      await withServer(options, async (api) => {
        const deadline = Date.now() + (options.timeout ?? DEFAULT_WAIT_MS);
        let runId = options.run;
        let result: { runId: string | null; status: string; summary: string | null; error: { message: string } | null; waitTimedOut: boolean };
        // Each request is capped by the server's maxWaitMs and answers waitTimedOut; ask again until the deadline.
        for (let attempt = 0; ; attempt++) {
          const remaining = Math.max(1000, deadline - Date.now());
          const query = new URLSearchParams({ timeoutMs: String(Math.min(remaining, 600_000)) });
          if (runId !== undefined) query.set("runId", runId);
          result = await api.call("GET", `/threads/${encodeURIComponent(threadId)}/wait?${query.toString()}`);
          runId ??= result.runId ?? undefined;
          if (!result.waitTimedOut || Date.now() >= deadline || attempt >= 10_000) break;
        }
        if (options.json) printJson(result);
        else {
          process.stdout.write(`${result.runId ?? "(no run)"}: ${statusText(result.status)}${result.waitTimedOut ? style(" (still running; the wait timed out)", "yellow") : ""}\n`);
          if (result.error) process.stdout.write(`${style("error:", "red")} ${result.error.message}\n`);
          if (result.summary) process.stdout.write(`${result.summary}\n`);
        }
        if (result.waitTimedOut) process.exitCode = EXIT.failed;
      });
    });
}
