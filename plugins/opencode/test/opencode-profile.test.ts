/**
 * A profile's settings on the real `opencode serve` (opencode-ai 1.18.33), driven by the
 * scripted model: tool rules through OpenCode's own `permission` config, the harness home as
 * OpenCode's config directory, the profile's environment and extra MCP servers. Slow (each
 * session starts its own server); run it on its own.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { environmentVariablesOf, startTestMcpServer, turnInput, type TestMcpServer } from "@switchyard/testkit";
import type { AdapterEvent } from "@switchyard/sdk";
import { createOpenCodeLab, twoModelProvider, type OpenCodeLab } from "./opencode-lab.js";

let lab: OpenCodeLab;
let mcp: TestMcpServer;
let scratch: string;
const TOKEN = "sy_opencode-profile-test-token";
const TIMEOUT = 60_000;

beforeAll(async () => {
  lab = await createOpenCodeLab();
  mcp = await startTestMcpServer({ token: TOKEN });
  scratch = mkdtempSync(path.join(tmpdir(), "opencode-profile-"));
}, 60_000);

afterAll(async () => {
  await lab?.dispose();
  await mcp?.close();
  if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
}, 60_000);

type Of<T extends AdapterEvent["type"]> = Extract<AdapterEvent, { type: T }>;
const ofType = <T extends AdapterEvent["type"]>(events: readonly AdapterEvent[], type: T, turnId: string): Of<T>[] =>
  events.filter((event): event is Of<T> => event.type === type && "turnId" in event && event.turnId === turnId);

/** The tool names of the model request OpenCode sent last (Chat Completions `tools`). */
function lastRequestTools(): string[] {
  const body = lab.server.requests.filter((r) => !r.sideCall).at(-1)?.body as
    { tools?: { function?: { name?: string } }[] } | undefined;
  return (body?.tools ?? []).map((tool) => tool.function?.name ?? "");
}

describe("a profile's tool rules on OpenCode", () => {
  it("a deny rule on the shell: OpenCode offers no bash tool, refuses the model's forced call, and the command never runs", async () => {
    const marker = path.join(lab.home.cwd, "denied-by-profile.txt");
    const { session, events } = await lab.open({
      runtimeMode: "full-access",
      toolRules: { allow: [], deny: ["Bash"], ask: [], allowOnly: false },
    });
    const t = turnInput(`do it @@shell touch ${marker} && echo ran @@then @@reply after: {{output}}`, {
      runtimeMode: "full-access",
    });
    await session.startTurn(t);
    const end = await events.waitFor("turn.terminal", (e) => e.turnId === t.turnId, TIMEOUT);
    expect(end.status, JSON.stringify(end.error)).toBe("completed");
    expect(existsSync(marker)).toBe(false);
    expect(lastRequestTools()).not.toContain("bash");
    expect(lastRequestTools()).toContain("read");
    expect(ofType(events.events, "runtime_request.opened", t.turnId)).toEqual([]);
    await session.close();

    // The same turn without the rule runs the command: the rule is what refused it.
    const free = await lab.open({ runtimeMode: "full-access" });
    const unruled = turnInput(`do it @@shell touch ${marker} && echo ran @@then @@reply after: {{output}}`, {
      runtimeMode: "full-access",
    });
    await free.session.startTurn(unruled);
    await free.events.waitFor("turn.terminal", (e) => e.turnId === unruled.turnId, TIMEOUT);
    expect(existsSync(marker)).toBe(true);
    await free.session.close();
  }, 180_000);

  it("a deny pattern refuses only the commands it names; an ask rule asks even in full access", async () => {
    const denied = path.join(lab.home.cwd, "pattern-denied.txt");
    const { session, events } = await lab.open({
      runtimeMode: "full-access",
      toolRules: { allow: [], deny: ["Bash(touch:*)"], ask: ["bash(echo asked*)"], allowOnly: false },
    });
    const t = turnInput(`go @@shell touch ${denied} @@then @@shell echo free-command @@then @@reply done {{output}}`, {
      runtimeMode: "full-access",
    });
    await session.startTurn(t);
    const end = await events.waitFor("turn.terminal", (e) => e.turnId === t.turnId, TIMEOUT);
    expect(end.status, JSON.stringify(end.error)).toBe("completed");
    expect(existsSync(denied)).toBe(false);
    const completed = ofType(events.events, "tool_call.completed", t.turnId);
    expect(completed.map((call) => call.status)).toEqual(["failed", "completed"]);
    expect(completed[1]?.output).toBe("free-command\n");

    const asked = turnInput("ask @@shell echo asked-by-rule @@then @@reply said {{output}}", {
      runtimeMode: "full-access",
    });
    await session.startTurn(asked);
    const opened = await events.waitFor("runtime_request.opened", (e) => e.turnId === asked.turnId, TIMEOUT);
    expect(opened.request).toMatchObject({ kind: "approval", approvalKind: "command" });
    await session.respondToRuntimeRequest(opened.requestId, { kind: "approval", decision: "accept" });
    const askedEnd = await events.waitFor("turn.terminal", (e) => e.turnId === asked.turnId, TIMEOUT);
    expect(askedEnd.status).toBe("completed");
    expect(events.textOf(asked.turnId)).toBe("said asked-by-rule");
    await session.close();
  }, 180_000);
});

describe("a profile's harness home, environment and MCP servers on OpenCode", () => {
  it("runs the session's server with the profile's home as OpenCode's config directory, its opencode.json and environment, and its extra MCP server", async () => {
    const home = path.join(scratch, "reviewer-home");
    mkdirSync(path.join(home, "agent"), { recursive: true });
    // The home's own config names the model provider: the lab's config file is not used.
    writeFileSync(
      path.join(home, "opencode.json"),
      JSON.stringify({ provider: twoModelProvider(lab.server.url), model: "fake/fake-model" }),
    );
    writeFileSync(
      path.join(home, "agent", "home-probe.md"),
      "---\ndescription: An agent only the profile's home defines\nmode: subagent\n---\nProbe.\n",
    );
    const { session, events } = await lab.open({
      runtimeMode: "full-access",
      harnessHome: home,
      environment: { REVIEW_STRICT: "profile-value" },
      mcpServers: { tracker: { type: "http", url: mcp.url, headers: { Authorization: `Bearer ${TOKEN}` } } },
    });
    const t = turnInput(
      'go @@shell echo "strict=$REVIEW_STRICT" @@then @@tool tracker_echo {"text":"from-profile-server"} @@then @@reply got {{output}}',
      { runtimeMode: "full-access" },
    );
    await session.startTurn(t);
    const end = await events.waitFor("turn.terminal", (e) => e.turnId === t.turnId, TIMEOUT);
    expect(end.status, JSON.stringify(end.error)).toBe("completed");
    const completed = ofType(events.events, "tool_call.completed", t.turnId);
    expect(completed[0]?.output).toBe("strict=profile-value\n");
    expect(mcp.calls).toContainEqual({ tool: "echo", args: { text: "from-profile-server" } });
    expect(events.textOf(t.turnId)).toBe("got echo: from-profile-server");

    // OpenCode's own answer: it read the profile's home as a config directory (an agent only
    // that home defines). Its `/path` still names the global config folder, which it reads too.
    const env = environmentVariablesOf(session.serverPid!);
    expect(env["OPENCODE_CONFIG_DIR"]).toBe(home);
    const auth = `Basic ${Buffer.from(`switchyard:${env["OPENCODE_SERVER_PASSWORD"]}`).toString("base64")}`;
    const agents = (await (await fetch(`${session.serverUrl}/agent`, { headers: { Authorization: auth } })).json()) as {
      name: string;
    }[];
    expect(agents.map((agent) => agent.name)).toContain("home-probe");
    // The extra server's header is in the config content (the server's environment), not argv.
    expect(env["OPENCODE_CONFIG_CONTENT"]).toContain('"tracker"');
    await session.close();
  }, 180_000);
});
