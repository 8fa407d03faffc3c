#!/usr/bin/env node
// The stand-in harness this plugin drives until a real agent takes its place. It speaks the
// protocol of src/template-wire.ts (JSON-RPC 2.0, one message per line on stdio) and keeps its
// conversations as JSON files under $TEMPLATE_HOME/conversations, so a new process resumes one.
// Its "model" follows directives in the user's text, one per line; a text without any is
// answered `echo: <text>`. The instructions of a turn are recorded, never read as directives.
//
//   @say <text>            replies <text>
//   @shell <command>       runs the command with /bin/sh (asking for approval first when the
//                          turn's approvals are "ask")
//   @mcp <tool> <json>     calls a tool of the injected Switchyard MCP endpoint, replies `mcp: <result>`
//   @wait <file>           waits until <file> exists (or the turn is interrupted)
//   @recall                replies with the user messages of the earlier turns, as JSON
//   @fail <message>        ends the turn failed
//   @crash <message>       writes <message> to stderr and exits with code 3
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";

const VERSION = "1.0.0";
const CONVERSATION_NOT_FOUND = -32004;

const home = process.env.TEMPLATE_HOME;
if (!home) {
  process.stderr.write("TEMPLATE_HOME is not set: the harness keeps its conversations there.\n");
  process.exit(2);
}
const conversationsDir = join(home, "conversations");
mkdirSync(conversationsDir, { recursive: true });

const write = (message) => process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
const notify = (method, params) => write({ method, params });
let nextRequestId = 1;
const awaiting = new Map();
/** A request to the client (approval); resolves with its result. */
const request = (method, params) =>
  new Promise((resolve, reject) => {
    const id = nextRequestId++;
    awaiting.set(id, { resolve, reject });
    write({ id, method, params });
  });

/** { id, turns: [{ turnId, instructions, text, reply }] } */
let conversation = null;
/** The running turn: { turnId, abort: AbortController }. */
let active = null;

function save() {
  const file = join(conversationsDir, `${conversation.id}.json`);
  writeFileSync(`${file}.partial`, JSON.stringify(conversation, null, 2));
  renameSync(`${file}.partial`, file);
}

class RpcError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

class TurnCancelled extends Error {}

function parse(text) {
  const steps = [];
  for (const raw of text.split("\n")) {
    const match = /^@(\S+)\s*(.*)$/.exec(raw.trim());
    if (match) steps.push({ op: match[1], rest: match[2] });
  }
  return steps.length > 0 ? steps : [{ op: "say", rest: `echo: ${text.trim()}` }];
}

function sleep(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

/** Runs a command in its own process group, so an interrupt stops everything it started. */
function runShell(command, signal) {
  return new Promise((resolve) => {
    const child = spawn("/bin/sh", ["-c", command], { stdio: ["ignore", "pipe", "pipe"], detached: true });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    const stop = () => {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    };
    signal.addEventListener("abort", stop, { once: true });
    child.on("close", (code) => {
      signal.removeEventListener("abort", stop);
      resolve({ code, output: output.trim() });
    });
  });
}

/** A Streamable HTTP MCP client in a few lines: initialize, then one tools/call, with the bearer token. */
async function callMcpTool(tool, args, signal) {
  const url = process.env.TEMPLATE_MCP_URL;
  const token = process.env.TEMPLATE_MCP_TOKEN;
  if (!url || !token) throw new Error("no Switchyard MCP endpoint was injected (TEMPLATE_MCP_URL, TEMPLATE_MCP_TOKEN)");
  const timeout = AbortSignal.timeout(Number(process.env.TEMPLATE_MCP_TOOL_TIMEOUT_MS) || 600_000);
  const headers = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    authorization: `Bearer ${token}`,
  };
  const post = async (message) => {
    const response = await fetch(url, {
      method: "POST",
      headers,
      body: JSON.stringify({ jsonrpc: "2.0", ...message }),
      signal: AbortSignal.any([signal, timeout]),
    });
    if (!response.ok) throw new Error(`the MCP endpoint answered ${message.method} with HTTP ${response.status}`);
    const session = response.headers.get("mcp-session-id");
    if (session) headers["mcp-session-id"] = session;
    if (message.id === undefined) return undefined;
    const body = await response.text();
    const replies = (response.headers.get("content-type") ?? "").includes("text/event-stream")
      ? body
          .split("\n")
          .filter((line) => line.startsWith("data:"))
          .map((line) => JSON.parse(line.slice(5)))
      : [JSON.parse(body)];
    const reply = replies.find((candidate) => candidate.id === message.id);
    if (!reply) throw new Error(`the MCP endpoint sent no answer to ${message.method}`);
    if (reply.error) throw new Error(reply.error.message);
    return reply.result;
  };
  const init = await post({
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "template-harness", version: VERSION },
    },
  });
  headers["mcp-protocol-version"] = init.protocolVersion;
  await post({ method: "notifications/initialized" });
  const result = await post({ id: 2, method: "tools/call", params: { name: tool, arguments: args } });
  const text = (result.content ?? [])
    .filter((part) => part.type === "text")
    .map((part) => part.text)
    .join("\n");
  return { failed: result.isError === true, output: text || JSON.stringify(result.structuredContent ?? null) };
}

async function runTurn(turn, params) {
  const { turnId, abort } = turn;
  const record = { turnId, instructions: params.instructions, text: params.text, reply: "" };
  const earlier = conversation.turns.map((entry) => entry.text);
  conversation.turns.push(record);
  save();
  notify("turn/started", { turnId });
  let items = 0;
  const say = (text) => {
    const itemId = `${turnId}:message:${++items}`;
    for (const word of text.split(/(?<= )/)) notify("message/delta", { turnId, itemId, text: word });
    notify("message/completed", { turnId, itemId, text });
    record.reply = record.reply === "" ? text : `${record.reply}\n${text}`;
  };
  let status = "completed";
  let error;
  try {
    for (const { op, rest } of parse(params.text)) {
      if (abort.signal.aborted) break;
      if (op === "say") say(rest);
      else if (op === "recall") say(`earlier messages: ${JSON.stringify(earlier)}`);
      else if (op === "wait") {
        while (!existsSync(rest) && !abort.signal.aborted) await sleep(50, abort.signal);
      } else if (op === "fail") throw new Error(rest || "the harness failed the turn");
      else if (op === "crash") {
        process.stderr.write(`${rest}\n`);
        process.exit(3);
      } else if (op === "shell") {
        const itemId = `${turnId}:shell:${++items}`;
        notify("tool/started", { turnId, itemId, tool: "shell", name: "shell", title: rest, input: { command: rest } });
        if (params.approvals === "ask") {
          // An interrupt while the client decides ends the wait: the turn is over either way.
          const answer = request("approval/request", { turnId, itemId, command: rest });
          const { decision } = await Promise.race([
            answer,
            new Promise((resolve) =>
              abort.signal.addEventListener("abort", () => resolve({ decision: "cancel" }), { once: true }),
            ),
          ]);
          if (abort.signal.aborted) break;
          if (decision === "cancel") {
            notify("tool/completed", { turnId, itemId, status: "declined" });
            throw new TurnCancelled();
          }
          if (decision === "decline") {
            notify("tool/completed", { turnId, itemId, status: "declined" });
            say(`declined: ${rest}`);
            continue;
          }
        }
        const { code, output } = await runShell(rest, abort.signal);
        notify("tool/completed", { turnId, itemId, status: code === 0 ? "completed" : "failed", output });
      } else if (op === "mcp") {
        const [, tool, json] = /^(\S+)\s*(.*)$/.exec(rest) ?? [];
        const server = process.env.TEMPLATE_MCP_SERVER || "switchyard";
        const itemId = `${turnId}:mcp:${++items}`;
        const args = json ? JSON.parse(json) : {};
        notify("tool/started", {
          turnId,
          itemId,
          tool: "mcp",
          name: tool,
          server,
          title: `${server}/${tool}`,
          input: args,
        });
        try {
          const { failed, output } = await callMcpTool(tool, args, abort.signal);
          notify("tool/completed", { turnId, itemId, status: failed ? "failed" : "completed", output });
          say(`mcp: ${output}`);
        } catch (cause) {
          notify("tool/completed", { turnId, itemId, status: "failed", output: cause.message });
          say(`mcp error: ${cause.message}`);
        }
      } else say(`unknown directive @${op}`);
    }
    if (abort.signal.aborted) status = "interrupted";
  } catch (cause) {
    if (abort.signal.aborted) status = "interrupted";
    else if (cause instanceof TurnCancelled) status = "cancelled";
    else {
      status = "failed";
      error = { message: cause.message };
    }
  }
  active = null;
  save();
  notify("turn/ended", { turnId, status, ...(error ? { error } : {}) });
}

const handlers = {
  initialize({ conversationId }) {
    if (conversationId) {
      const file = join(conversationsDir, `${conversationId}.json`);
      if (!existsSync(file))
        throw new RpcError(CONVERSATION_NOT_FOUND, `conversation ${conversationId} not found in ${conversationsDir}`);
      conversation = JSON.parse(readFileSync(file, "utf8"));
      return { conversationId, resumed: true, version: VERSION };
    }
    conversation = { id: randomUUID(), turns: [] };
    save();
    return { conversationId: conversation.id, resumed: false, version: VERSION };
  },
  "turn/start"(params) {
    if (conversation === null) throw new RpcError(-32600, "initialize first");
    if (active !== null) throw new RpcError(-32600, `turn ${active.turnId} is still running`);
    const turn = { turnId: randomUUID(), abort: new AbortController() };
    active = turn;
    // Answer first, then run: every notification of the turn follows its id.
    setImmediate(() => void runTurn(turn, params));
    return { turnId: turn.turnId };
  },
  "turn/interrupt"({ turnId }) {
    if (active?.turnId === turnId) active.abort.abort();
    return {};
  },
};

createInterface({ input: process.stdin })
  .on("line", (line) => {
    if (line.trim() === "") return;
    const message = JSON.parse(line);
    if (typeof message.method === "string") {
      const handler = handlers[message.method];
      try {
        if (!handler) throw new RpcError(-32601, `unknown method ${message.method}`);
        const result = handler(message.params ?? {});
        if (message.id !== undefined) write({ id: message.id, result });
      } catch (cause) {
        if (message.id !== undefined)
          write({ id: message.id, error: { code: cause.code ?? -32603, message: cause.message } });
      }
      return;
    }
    const waiter = awaiting.get(message.id);
    awaiting.delete(message.id);
    if (message.error) waiter?.reject(new Error(message.error.message));
    else waiter?.resolve(message.result);
  })
  .on("close", () => {
    // The client closed stdin: the session is over.
    process.exit(0);
  });
