import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI } from "../support/cli.js";
import { McpLab } from "../support/mcp-lab.js";

/** A loopback port nothing listens on (bound once, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};
const TOOLS_LIST = { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} };

interface BridgeRun {
  readonly answers: {
    id: number;
    error?: { code: number; message: string; data?: { reason: string } };
    result?: unknown;
  }[];
  readonly exitCode: number | null;
  readonly stderr: string;
}

/**
 * Runs the bridge as a harness does: one JSON-RPC request per line on stdin, answers read from
 * stdout, then stdin closed. Waits for an answer to every request before closing.
 */
async function runBridge(env: Record<string, string>, requests: readonly { id: number }[]): Promise<BridgeRun> {
  const child = spawn(process.execPath, [CLI, "mcp-bridge"], {
    env: { ...process.env, ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (chunk) => (stderr += String(chunk)));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const answers: BridgeRun["answers"] = [];
  const allAnswered = new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on("line", (line) => {
      answers.push(JSON.parse(line) as BridgeRun["answers"][number]);
      if (answers.length === requests.length) resolve();
    });
    void exited.then(() => reject(new Error(`the bridge exited before answering every request: ${stderr}`)));
  });
  for (const request of requests) child.stdin!.write(`${JSON.stringify(request)}\n`);
  await allAnswered;
  child.stdin!.end();
  return { answers, exitCode: await exited, stderr };
}

/** Connects the MCP SDK's own stdio client to the bridge, as a harness without HTTP MCP would. */
async function connectThroughBridge(env: Record<string, string>): Promise<Client> {
  const client = new Client({ name: "bridge-test", version: "1.0.0" });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, "mcp-bridge"],
    env,
    stderr: "pipe",
  });
  // Bounded so a bridge that never answers fails the test instead of hanging it.
  await client.connect(transport, { timeout: 20_000 });
  return client;
}

describe("switchyard mcp-bridge", () => {
  let lab: McpLab;
  beforeAll(async () => {
    lab = await McpLab.start();
  });
  afterAll(async () => lab.stop());

  it("forwards a stdio client to the endpoint with a valid token, and exits 0 when stdin closes", async () => {
    const { token } = lab.registry.issueClientToken({ ttlMs: 600_000, capabilities: ["orchestration:read"] });
    const client = await connectThroughBridge({ SWITCHYARD_MCP_URL: lab.server.mcpUrl, SWITCHYARD_MCP_TOKEN: token });
    const tools = await client.listTools();
    expect(tools.tools.map((tool) => tool.name)).toContain("orchestrator_capabilities");
    await client.close();

    const run = await runBridge({ SWITCHYARD_MCP_URL: lab.server.mcpUrl, SWITCHYARD_MCP_TOKEN: token }, [INITIALIZE]);
    expect(run.answers[0]).toMatchObject({ id: 1, result: { serverInfo: expect.any(Object) } });
    expect(run.exitCode, run.stderr).toBe(0);
  });

  it("answers every request with a JSON-RPC error naming a refused token, and exits 2", async () => {
    const env = { SWITCHYARD_MCP_URL: lab.server.mcpUrl, SWITCHYARD_MCP_TOKEN: "sy_not_a_real_token_0123456789abcdef" };
    await expect(connectThroughBridge(env)).rejects.toThrow(
      /refused SWITCHYARD_MCP_TOKEN \(HTTP 401\).*switchyard token issue/,
    );

    const run = await runBridge(env, [INITIALIZE, TOOLS_LIST]);
    expect(run.answers.map((answer) => answer.id).sort()).toEqual([1, 2]);
    for (const answer of run.answers) {
      expect(answer.error).toMatchObject({ code: -32001, data: { reason: "unauthorized" } });
      expect(answer.error!.message).toContain("refused SWITCHYARD_MCP_TOKEN");
    }
    expect(run.exitCode).toBe(2);
    // The token never reaches the bridge's stderr.
    expect(run.stderr).not.toContain("sy_not_a_real_token");
  });

  it("answers every request with a JSON-RPC error naming an unreachable URL, and exits 1", async () => {
    const url = `http://127.0.0.1:${await closedPort()}/mcp`;
    const env = { SWITCHYARD_MCP_URL: url, SWITCHYARD_MCP_TOKEN: "sy_whatever_0123456789abcdef" };
    await expect(connectThroughBridge(env)).rejects.toThrow(
      new RegExp(`Cannot reach Switchyard at ${url.replace(/[.]/g, "\\.")} \\(ECONNREFUSED\\)`),
    );

    const run = await runBridge(env, [INITIALIZE, TOOLS_LIST]);
    expect(run.answers.map((answer) => answer.id).sort()).toEqual([1, 2]);
    for (const answer of run.answers)
      expect(answer.error).toMatchObject({ code: -32002, data: { reason: "unreachable" } });
    expect(run.exitCode).toBe(1);
  });

  it("refuses to start without its environment, with exit code 2", async () => {
    const child = spawn(process.execPath, [CLI, "mcp-bridge"], {
      env: { PATH: process.env.PATH ?? "" },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr!.on("data", (chunk) => (stderr += String(chunk)));
    const code = await new Promise((resolve) => child.on("exit", resolve));
    expect(code).toBe(2);
    expect(stderr).toContain("SWITCHYARD_MCP_URL and SWITCHYARD_MCP_TOKEN must be set");
  });
});
