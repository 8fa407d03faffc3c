import { fileURLToPath } from "node:url";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startForwardingProxy, type ForwardingProxy } from "../support/forwarding-proxy.js";
import { McpLab } from "../support/mcp-lab.js";

// The official MCP conformance CLI (@modelcontextprotocol/conformance, a devDependency of core)
// against a real Switchyard server, reached the way an SSH port-forward or a gateway reaches it:
// through a forwarding proxy on another loopback port that adds the bearer token and passes
// every other header unchanged. It runs on the Node that runs the tests (it needs 22 or newer).
const CONFORMANCE_CLI = fileURLToPath(
  new URL("../../../node_modules/@modelcontextprotocol/conformance/dist/index.js", import.meta.url),
);
const BASELINE = fileURLToPath(new URL("./expected-failures.yml", import.meta.url));

/**
 * The protocol revisions the CLI has server scenarios for, of those the endpoint serves. Each run
 * takes every server scenario the CLI lists for it ("all": pending ones too). Its client is the
 * SDK's v1 client, which speaks 2025-11-25 on the wire whatever the scenario set. 2025-03-26 has
 * no server scenarios in the CLI; 2026-07-28 is not a revision it knows (see the last test).
 */
const REVISIONS = ["2025-06-18", "2025-11-25"] as const;

async function conformance(args: string[]): Promise<{ exitCode: number | undefined; output: string }> {
  const result = await execa(process.execPath, [CONFORMANCE_CLI, ...args], {
    reject: false,
    all: true,
    timeout: 300_000,
    stdin: "ignore",
    env: { NO_COLOR: "1" },
  });
  return { exitCode: result.exitCode, output: String(result.all) };
}

/** The server scenarios the CLI lists for a revision. */
async function scenariosFor(revision: string): Promise<string[]> {
  const { exitCode, output } = await conformance(["list", "--server", "--spec-version", revision]);
  expect(exitCode, output).toBe(0);
  return [...output.matchAll(/^\s+- (\S+)/gm)].map((match) => match[1]!);
}

describe("the official MCP conformance CLI, through a forwarding proxy", () => {
  let lab: McpLab;
  let proxy: ForwardingProxy;
  beforeAll(async () => {
    lab = await McpLab.start();
    const { token } = lab.registry.issueClientToken({ ttlMs: 3_600_000, capabilities: ["orchestration:operate"] });
    proxy = await startForwardingProxy(lab.server.port, token);
  });
  afterAll(async () => {
    await proxy?.close();
    await lab?.stop();
  });

  it.each(REVISIONS)(
    "runs every server scenario it has for %s, failing none but the reference server's fixtures (expected-failures.yml)",
    async (revision) => {
      const expected = await scenariosFor(revision);
      expect(expected.length, `the CLI lists no server scenarios for ${revision}`).toBeGreaterThan(0);
      const { exitCode, output } = await conformance([
        "server",
        "--url",
        `http://localhost:${proxy.port}/mcp`,
        "--suite",
        "all",
        "--spec-version",
        revision,
        "--expected-failures",
        BASELINE,
      ]);
      // Exit 0: every failure is in the baseline and every baseline entry that ran still fails.
      expect(exitCode, output).toBe(0);
      const ran = [...output.matchAll(/^[✓✗] (\S+): \d+ passed, \d+ failed/gm)].map((match) => match[1]!);
      expect(ran.sort()).toEqual([...expected].sort());
      // The scenarios that apply to any MCP server pass outright.
      for (const scenario of [
        "server-initialize",
        "ping",
        "tools-list",
        ...(revision === "2025-11-25" ? ["dns-rebinding-protection", "server-sse-multiple-streams"] : []),
      ]) {
        expect(output, scenario).toMatch(new RegExp(`^✓ ${scenario}: [1-9]\\d* passed, 0 failed`, "m"));
      }
    },
  );

  it("knows no 2026-07-28 server scenarios yet (conformance 0.1.16): core/test/mcp/revision-2026-wire.test.ts and protocol-revisions.test.ts check that revision", async () => {
    // When a release of the CLI knows the revision, this fails: add "2026-07-28" to REVISIONS.
    const { exitCode, output } = await conformance(["list", "--server", "--spec-version", "2026-07-28"]);
    expect({ exitCode, unknown: output.includes("Unknown spec version: 2026-07-28") }, output).toEqual({
      exitCode: 1,
      unknown: true,
    });
  });
});
