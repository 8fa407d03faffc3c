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
 * Every protocol revision the endpoint serves, each with the server scenarios the CLI has for it
 * ("all": pending ones too). The CLI speaks the revision on the wire: the stateful initialize
 * handshake through 2025-11-25, stateless requests with per-request `_meta` on 2026-07-28, so a
 * scenario that applies to several revisions runs once under each. 2025-03-26 has one scenario
 * (the session lifecycle).
 */
const REVISIONS = ["2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"] as const;

/** The scenarios that apply to any MCP server, which must pass outright (no check failing). */
const MUST_PASS: Record<(typeof REVISIONS)[number], string[]> = {
  "2025-03-26": ["server-session-lifecycle"],
  "2025-06-18": ["server-initialize", "server-session-lifecycle", "ping", "tools-list", "tools-call-error"],
  "2025-11-25": [
    "server-initialize",
    "server-session-lifecycle",
    "ping",
    "tools-list",
    "tools-call-error",
    "dns-rebinding-protection",
    "server-sse-multiple-streams",
  ],
  "2026-07-28": [
    "tools-list",
    "tools-call-error",
    "dns-rebinding-protection",
    "server-sse-multiple-streams",
    "http-header-validation",
    "input-required-result-unsupported-methods",
    "input-required-result-ignore-extra-params",
    "input-required-result-validate-input",
  ],
};

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
      for (const scenario of MUST_PASS[revision]) {
        expect(output, scenario).toMatch(new RegExp(`^✓ ${scenario}: [1-9]\\d* passed, 0 failed`, "m"));
      }
    },
  );

  it("runs the 2026-07-28 stateless scenario, whose only failing checks need the reference server's test_missing_capability tool", async () => {
    const { exitCode, output } = await conformance([
      "server",
      "--url",
      `http://localhost:${proxy.port}/mcp`,
      "--scenario",
      "server-stateless",
      "--spec-version",
      "2026-07-28",
      "--expected-failures",
      BASELINE,
    ]);
    expect(exitCode, output).toBe(0);
    // server/discover, per-request _meta, version and header refusals, the removed methods' 404s
    // and subscriptions/listen: at least 26 checks, of which the two fixture checks alone fail.
    const summary = /^Passed: (\d+)\/\d+, (\d+) failed, (\d+) warnings/m.exec(output);
    expect(summary, output).not.toBeNull();
    expect({ passed: Number(summary![1]) >= 26, failed: Number(summary![2]), warnings: Number(summary![3]) }).toEqual({
      passed: true,
      failed: 2,
      warnings: 0,
    });
  });
});
