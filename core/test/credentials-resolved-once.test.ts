import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli } from "./support/cli.js";
import { callTool, connectMcp } from "./support/mcp-client.js";
import { McpLab } from "./support/mcp-lab.js";

// The registry answers a token in use from memory (services/credentials/credential-cache.ts).
// Whatever changes a credential, in this process or another one, must reach its very next call.

/** A tools/call with `token`, as a harness sends it: the HTTP status and body. */
async function listThreads(
  mcpUrl: string,
  token: string,
  projectId: string,
): Promise<{ status: number; body: string }> {
  const response = await fetch(mcpUrl, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "t3_thread_list", arguments: { projectId } },
    }),
  });
  return { status: response.status, body: await response.text() };
}

describe("a credential resolved before", () => {
  let lab: McpLab;
  beforeEach(async () => {
    lab = await McpLab.start();
  });
  afterEach(async () => {
    await lab.stop();
  });

  function usedToken(): { id: string; token: string } {
    return lab.registry.issueClientToken({ ttlMs: 3_600_000, capabilities: ["orchestration:read"] });
  }

  it("is refused on its next call once revoked here, on a client that is already connected", async () => {
    const { id, token } = usedToken();
    const client = await connectMcp(lab.server.mcpUrl, token);
    expect((await callTool(client, "t3_thread_list", { projectId: lab.projectId })).ok).toBe(true);
    expect((await callTool(client, "t3_thread_list", { projectId: lab.projectId })).ok).toBe(true);
    expect(lab.registry.revoke(id)).toBe(true);
    await expect(callTool(client, "t3_thread_list", { projectId: lab.projectId })).rejects.toThrow(
      /401|revoked|Unauthorized/i,
    );
    const refused = await listThreads(lab.server.mcpUrl, token, lab.projectId);
    expect(refused.status).toBe(401);
    expect(refused.body).toContain("Token revoked");
    await client.close();
  });

  it("is refused on its next call once revoked by another process (switchyard token revoke)", async () => {
    const { id, token } = usedToken();
    expect((await listThreads(lab.server.mcpUrl, token, lab.projectId)).status).toBe(200);
    expect((await listThreads(lab.server.mcpUrl, token, lab.projectId)).status).toBe(200);
    const revoked = await runCli(["token", "revoke", id, "--home", lab.t.home]);
    expect(revoked.code, revoked.stderr).toBe(0);
    const refused = await listThreads(lab.server.mcpUrl, token, lab.projectId);
    expect(refused.status).toBe(401);
    expect(refused.body).toContain("Token revoked");
  });

  it("reads a change another connection committed to any column, expiry included, on its next call", async () => {
    const { id, token } = usedToken();
    expect((await listThreads(lab.server.mcpUrl, token, lab.projectId)).status).toBe(200);
    const other = new Database(join(lab.t.home, "switchyard.db"));
    try {
      other.prepare("UPDATE mcp_credentials SET expires_at = ? WHERE id = ?").run(Date.now() - 1, id);
    } finally {
      other.close();
    }
    const refused = await listThreads(lab.server.mcpUrl, token, lab.projectId);
    expect(refused.status).toBe(401);
    expect(refused.body).toContain("Token expired");
  });

  it("refuses an agent credential on its next call once a renewal retired it", async () => {
    const agent = await lab.liveAgent();
    const token = await lab.tokenFor(agent.threadId);
    expect((await listThreads(lab.server.mcpUrl, token, lab.projectId)).status).toBe(200);
    const { providerSessionId } = lab.registry.grants.find((grant) => grant.grant.token === token)!;
    // A renewal retires the session's other credentials: this one, once the overlap is over.
    await lab.registry.retireOtherCredentials(providerSessionId, "sy_not-this-token", 0);
    const retired = await listThreads(lab.server.mcpUrl, token, lab.projectId);
    expect(retired.status).toBe(401);
    expect(retired.body).toContain("Token expired");
    agent.release();
  });

  it("is refused once revoked while a request's read of it was under way", async () => {
    const { id, token } = usedToken();
    // Not in memory yet: this request reads the row, and the read is awaited (a store on
    // another machine answers it later), so a revocation lands between the read and the
    // cache keeping what it read.
    const during = lab.registry.resolve(token);
    expect(lab.registry.revoke(id)).toBe(true);
    // The request that began before the revocation may pass; none after it.
    expect("scope" in (await during)).toBe(true);
    expect(await lab.registry.resolve(token)).toEqual({ rejection: "revoked" });
    const refused = await listThreads(lab.server.mcpUrl, token, lab.projectId);
    expect(refused.status).toBe(401);
    expect(refused.body).toContain("Token revoked");
  });

  it("keeps its stored last use fresh while it is answered from memory", async () => {
    const { id, token } = usedToken();
    expect((await listThreads(lab.server.mcpUrl, token, lab.projectId)).status).toBe(200);
    const readLastUse = async () => (await lab.registry.list()).find((credential) => credential.id === id)!.lastUsedAt;
    const first = await readLastUse();
    // The stored clock moves in steps of at most a second; a call after a step writes it again.
    const deadline = Date.now() + 5_000;
    while ((await readLastUse()) === first && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      expect((await listThreads(lab.server.mcpUrl, token, lab.projectId)).status).toBe(200);
    }
    expect(Date.parse(await readLastUse())).toBeGreaterThan(Date.parse(first));
  });
});
