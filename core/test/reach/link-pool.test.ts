import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ReachLinkClient } from "../../src/services/reach/link-client.js";
import { ReachAudit } from "../../src/services/reach/reach-audit.js";
import { ReachGrants } from "../../src/services/reach/reach-grants.js";
import { ReachLinks } from "../../src/services/reach/reach-links.js";
import { McpLab } from "../support/mcp-lab.js";

/** One request the proxy saw on its way to B. */
interface Seen {
  readonly rpc: string;
  readonly authorization: string;
}

/**
 * A loopback HTTP proxy in front of B that notes every request's JSON-RPC method and bearer,
 * and can cut the connection of the next tool call before B sees it (a kept-alive socket the
 * peer dropped).
 */
async function countingProxy(
  target: string,
): Promise<{ url: string; seen: Seen[]; cutNextCall(): void; close(): Promise<void> }> {
  const upstream = new URL(target);
  const seen: Seen[] = [];
  let cut = false;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      let rpc: string = req.method ?? "?";
      try {
        rpc = String((JSON.parse(body.toString()) as { method?: unknown }).method ?? rpc);
      } catch {
        // A GET (the SDK's event stream) has no body.
      }
      if (rpc === "tools/call" && cut) {
        cut = false;
        req.socket.destroy();
        return;
      }
      seen.push({ rpc, authorization: String(req.headers.authorization ?? "") });
      const forward = request(
        {
          host: upstream.hostname,
          port: upstream.port,
          path: req.url,
          method: req.method,
          headers: { ...req.headers, host: upstream.host },
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      forward.on("error", () => res.destroy());
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.5", resolve));
  return {
    url: `http://127.0.0.5:${(server.address() as AddressInfo).port}`,
    seen,
    cutNextCall: () => (cut = true),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function ok(result: CallToolResult): Record<string, unknown> {
  if (result.isError) throw new Error(`expected success, got ${JSON.stringify(result.content)}`);
  return result.structuredContent as Record<string, unknown>;
}

/**
 * A's link client keeps one MCP connection per link: forwarded calls do not pay the MCP
 * handshake each time, a changed link never rides the old connection, and a connection the
 * peer cut is replaced once.
 */
describe("pooled link connections (A's link client to B through a counting proxy)", () => {
  let a: McpLab;
  let b: McpLab;
  let proxy: Awaited<ReturnType<typeof countingProxy>>;

  beforeAll(async () => {
    b = await McpLab.start({ listen: { host: "127.0.0.2" } });
    a = await McpLab.start({ listen: { host: "127.0.0.3" } });
    proxy = await countingProxy(b.server.url);
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await proxy?.close();
  });

  const grants = () => b.host.container.resolve(ReachGrants);
  const links = () => a.host.container.resolve(ReachLinks);
  const client = () => a.host.container.resolve(ReachLinkClient);
  const issue = () =>
    grants().issue({
      for: "linux-box",
      projects: [b.projectId],
      verbs: ["read"],
      maxRuntimeMode: "approval-required",
      ttlMs: 3_600_000,
    });
  const count = (rpc: string, from = 0) => proxy.seen.slice(from).filter((request) => request.rpc === rpc).length;
  const auditOf = async (name: string) =>
    (await a.host.container.resolve(ReachAudit).list({ direction: "out" })).filter((row) => row.environment === name);

  it("opens one MCP connection for several forwarded calls, and audits each call", async () => {
    links().add({ name: "pooled", url: proxy.url, secret: issue().secret });
    const from = proxy.seen.length;
    for (let i = 0; i < 4; i += 1)
      ok(
        await client().callTool("pooled", "t3_thread_list", { projectId: b.projectId }, { callerThreadId: "thr_on_a" }),
      );
    expect(count("initialize", from)).toBe(1);
    expect(count("tools/call", from)).toBe(4);
    expect((await auditOf("pooled")).map((row) => [row.tool, row.outcome, row.callerThreadId])).toEqual(
      Array.from({ length: 4 }, () => ["t3_thread_list", "ok", "thr_on_a"]),
    );
  });

  it("does not serve a link removed and added again with a new secret over the old connection", async () => {
    const first = issue();
    links().add({ name: "readded", url: proxy.url, secret: first.secret });
    ok(await client().callTool("readded", "t3_thread_list", { projectId: b.projectId }));
    // The old secret stops working there; the link here is replaced under the same name.
    await grants().revoke(first.grant.id);
    await links().remove("readded");
    const second = issue();
    links().add({ name: "readded", url: proxy.url, secret: second.secret });
    const from = proxy.seen.length;
    ok(await client().callTool("readded", "t3_thread_list", { projectId: b.projectId }));
    expect(count("initialize", from)).toBe(1);
    expect(proxy.seen.slice(from).map((request) => request.authorization)).toEqual(
      proxy.seen.slice(from).map(() => `Bearer ${second.secret}`),
    );
  });

  it("replaces a connection the peer cut, sending the call once more on a fresh one (one audit row)", async () => {
    links().add({ name: "cut", url: proxy.url, secret: issue().secret });
    ok(await client().callTool("cut", "t3_thread_list", { projectId: b.projectId }));
    const from = proxy.seen.length;
    proxy.cutNextCall();
    ok(await client().callTool("cut", "t3_thread_list", { projectId: b.projectId }));
    expect(count("initialize", from)).toBe(1);
    expect(count("tools/call", from)).toBe(1);
    expect((await auditOf("cut")).map((row) => row.outcome)).toEqual(["ok", "ok"]);
  });

  it("does not send a call that may not be repeated again when its reused connection was cut; the next call reconnects", async () => {
    const issued = grants().issue({
      for: "linux-box",
      projects: [b.projectId],
      verbs: ["read", "create"],
      maxRuntimeMode: "approval-required",
      ttlMs: 3_600_000,
    });
    links().add({ name: "cut-create", url: proxy.url, secret: issued.secret });
    ok(await client().callTool("cut-create", "t3_thread_list", { projectId: b.projectId }));
    const from = proxy.seen.length;
    proxy.cutNextCall();
    const create = {
      projectId: b.projectId,
      threads: [{ prompt: "@@reply once", target: { providerInstanceId: "alpha" } }],
    };
    await expect(client().callTool("cut-create", "create_threads", create)).rejects.toMatchObject({
      code: "provider_unavailable",
      details: { environmentId: "cut-create", reason: "unreachable" },
    });
    expect(count("tools/call", from)).toBe(0);
    ok(await client().callTool("cut-create", "t3_thread_list", { projectId: b.projectId }));
    expect(count("initialize", from)).toBe(1);
    expect((await auditOf("cut-create")).map((row) => [row.tool, row.outcome])).toEqual(
      expect.arrayContaining([
        ["create_threads", "provider_unavailable"],
        ["t3_thread_list", "ok"],
      ]),
    );
  });
});
