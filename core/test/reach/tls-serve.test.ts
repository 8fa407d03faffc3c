import { mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isOrchestratorFailure, type OrchestratorFailure } from "../../src/engine/orchestrator-failure.js";
import { ReachLinkClient } from "../../src/services/reach/link-client.js";
import { ReachLinks } from "../../src/services/reach/reach-links.js";
import { displayFingerprint, pinnedFetch } from "../../src/services/reach/pinned-fetch.js";
import { runCli } from "../support/cli.js";
import { McpLab } from "../support/mcp-lab.js";
import { readRows, ServeProcess, type ServeEndpoint } from "../support/serve-process.js";

type TlsEndpoint = ServeEndpoint & { publicUrl: string; tlsFingerprint: string | null };

async function thrown(promise: Promise<unknown>): Promise<OrchestratorFailure> {
  try {
    await promise;
  } catch (error) {
    if (isOrchestratorFailure(error)) return error;
    throw error;
  }
  throw new Error("expected the call to throw");
}

/**
 * `serve --host` with TLS: a real `switchyard serve` (B) with a self-signed certificate made under
 * its home, on 127.0.0.2; A (a server on 127.0.0.3) links to it, `link add` pinning the
 * certificate's fingerprint on first contact, and calls B over TLS. Every address other than
 * 127.0.0.0/8, ::1 and localhost counts as beyond loopback and is refused without TLS; TLS on a
 * loopback address is allowed by choice, which is what lets this test run without a network.
 */
describe("serve --host with TLS, and links that pin the certificate", () => {
  let scratch: string;
  let homeB: string;
  let b: ServeProcess;
  let endpoint: TlsEndpoint;
  let a: McpLab;
  let projectB: string;
  const onB = (args: string[], input?: string) =>
    runCli([...args, "--home", homeB], input === undefined ? {} : { input });

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), "switchyard-tls-"));
    homeB = join(scratch, "b");
    mkdirSync(join(scratch, "repo"));
    projectB = (JSON.parse((await onB(["project", "add", join(scratch, "repo"), "--json"])).stdout) as { id: string })
      .id;
    b = ServeProcess.start(homeB, ["--port", "0", "--host", "127.0.0.2", "--tls-self-signed"]);
    endpoint = (await b.ready) as TlsEndpoint;
    a = await McpLab.start({ listen: { host: "127.0.0.3" } });
  }, 60_000);
  afterAll(async () => {
    await a?.stop();
    await b?.terminate();
    rmSync(scratch, { recursive: true, force: true });
  });

  it("refuses an address beyond loopback without TLS, and half-given certificate options, before binding anything", async () => {
    const home = join(scratch, "refused");
    for (const [args, message] of [
      [["--host", "192.0.2.10"], "serve --host 192.0.2.10 needs TLS"],
      [["--host", "0.0.0.0"], "needs TLS"],
      [["--host", "192.0.2.10", "--tls-cert", join(scratch, "c.pem")], "--tls-cert and --tls-key go together"],
      [
        ["--host", "192.0.2.10", "--tls-cert", join(scratch, "c.pem"), "--tls-key", join(scratch, "k.pem")],
        "Could not read the TLS certificate",
      ],
    ] as const) {
      const outcome = await runCli(["serve", "--home", home, "--port", "0", ...args]);
      expect(outcome.code, outcome.stderr).toBe(2);
      expect(outcome.stderr).toContain(message);
    }
  });

  it("serves TLS at the chosen address with a certificate made under the home, and plain loopback for this machine's agents", async () => {
    expect(endpoint.publicUrl).toMatch(/^https:\/\/127\.0\.0\.2:\d+$/);
    expect(endpoint.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(endpoint.mcpUrl).toBe(`${endpoint.url}/mcp`);
    expect(endpoint.tlsFingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(statSync(join(homeB, "keys", "tls", "server.key")).mode & 0o777).toBe(0o600);
    expect(statSync(join(homeB, "keys", "tls")).mode & 0o777).toBe(0o700);
    const health = await pinnedFetch(endpoint.tlsFingerprint!)(`${endpoint.publicUrl}/health`);
    expect(health.status).toBe(200);
    expect((await fetch(`${endpoint.url}/health`)).status).toBe(200);
  });

  it("link add pins the certificate on first contact; calls go over TLS; a changed certificate is refused with nothing sent", async () => {
    const secret = (
      await onB(["grant", "issue", "--for", "linux-box", "--projects", projectB, "--verbs", "read"])
    ).stdout.trim();
    const added = await runCli(["link", "add", "mac", endpoint.publicUrl, "--secret", "-", "--home", a.t.home], {
      input: secret,
    });
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toContain(`TLS certificate SHA-256 ${displayFingerprint(endpoint.tlsFingerprint!)}`);
    expect(added.stdout + added.stderr).not.toContain(secret);
    expect((await a.host.container.resolve(ReachLinks).get("mac"))!.fingerprint).toBe(endpoint.tlsFingerprint);

    const listed = await a.host.container
      .resolve(ReachLinkClient)
      .callTool("mac", "t3_thread_list", { projectId: projectB });
    expect(listed.isError, JSON.stringify(listed.content)).toBeFalsy();

    // A link pinned to another certificate (as after the server's certificate changed).
    const other = (
      await onB(["grant", "issue", "--for", "linux-box", "--projects", projectB, "--verbs", "read"])
    ).stdout.trim();
    a.host.container
      .resolve(ReachLinks)
      .add({ name: "mac-pinned-elsewhere", url: endpoint.publicUrl, secret: other, fingerprint: "00".repeat(32) });
    const failure = await thrown(
      a.host.container
        .resolve(ReachLinkClient)
        .callTool("mac-pinned-elsewhere", "t3_thread_list", { projectId: projectB }),
    );
    expect(failure).toMatchObject({
      code: "provider_unavailable",
      details: {
        environmentId: "mac-pinned-elsewhere",
        reason: "certificate_changed",
        expectedFingerprint: "00".repeat(32),
        actualFingerprint: endpoint.tlsFingerprint,
      },
    });
    // B never saw the secret: its grant was never used.
    const grants = readRows<{ for_name: string; last_used_at: number | null }>(
      homeB,
      "SELECT for_name, last_used_at FROM reach_grants ORDER BY created_at",
    );
    expect(grants.map((grant) => grant.last_used_at !== null)).toEqual([true, false]);
  });

  it("keeps its certificate across a restart, so the pinned link still works", async () => {
    expect(await b.terminate()).toBe(0);
    b = ServeProcess.start(homeB, ["--port", "0", "--host", "127.0.0.2", "--tls-self-signed"]);
    const restarted = (await b.ready) as TlsEndpoint;
    expect(restarted.tlsFingerprint).toBe(endpoint.tlsFingerprint);
  }, 60_000);
});
