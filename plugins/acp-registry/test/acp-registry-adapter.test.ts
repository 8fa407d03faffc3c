import { readFile, realpath, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RegistryCatalog, detectPlatform } from "@switchyard/registry-cache";
import {
  hasErrorCode,
  type McpEndpointGrant,
  type OrchestrationAdapter,
  type ProviderInstanceDescriptor,
  type ProviderSession,
  type TurnInput,
} from "@switchyard/sdk";
import { mcpServerOf } from "@switchyard/sdk/acp";
import {
  SCRIPTED_ACP_AGENT_BIN,
  ScriptedModelServer,
  createAcpTestContext,
  createCodexHome,
  createEventRecorder,
  createGeminiHome,
  startTestMcpServer,
  type AcpTestContext,
  type AdapterEventRecorder,
  type ScriptedAcpAgentOptions,
  type TestMcpServer,
} from "@switchyard/testkit";
import plugin, { acpRegistryCacheDir, type AcpRegistryOptions } from "../src/index.js";
import {
  realAgents,
  shellScriptArchive,
  startRegistryFixture,
  type RegistryFixture,
} from "./support/registry-fixture.js";

// Provider-specific behaviour of the acp-registry driver. Registry agents come from a registry
// fixture on 127.0.0.1: the sdk's scripted ACP agent packaged as a real binary archive (a
// `#!/bin/sh` launcher) and installed through RegistryCatalog, and the two real ACP agents
// from npm (Gemini CLI, codex-acp) through local command overrides.

const PLATFORM = detectPlatform();

/** codex-acp 2.x's session modes for Switchyard's runtime modes (its default, "agent", has a model review approvals). */
const CODEX_ACP_MODES = {
  runtime: {
    "approval-required": "read-only",
    "auto-accept-edits": "workspace-write",
    "full-access": "agent-full-access",
  },
};

let ctx: AcpTestContext;
let cwd: string;
let registry: RegistryFixture;
let mcpServer: TestMcpServer | null = null;
const sessions: ProviderSession[] = [];
const cleanups: (() => Promise<void>)[] = [];
let counter = 0;

beforeEach(async () => {
  ctx = await createAcpTestContext();
  cwd = await realpath(await mkdtemp(path.join(os.tmpdir(), "acp-registry-cwd-")));
  registry = await startRegistryFixture();
});

afterEach(async () => {
  for (const session of sessions.splice(0)) await session.close();
  await ctx.dispose();
  await mcpServer?.close();
  mcpServer = null;
  await registry.close();
  for (const cleanup of cleanups.splice(0)) await cleanup();
  await rm(cwd, { recursive: true, force: true });
});

function instance(environment: Record<string, string> = {}): ProviderInstanceDescriptor {
  return {
    id: "registry-agent",
    driver: "acp-registry",
    displayName: "Registry agent",
    homePath: null,
    environment,
    customModels: [],
  };
}

async function adapterFor(
  options: Record<string, unknown>,
  environment: Record<string, string> = {},
): Promise<OrchestrationAdapter> {
  const driver = plugin.drivers.find((candidate) => candidate.driverKind === "acp-registry");
  if (!driver?.optionsSchema) throw new Error("the acp-registry driver is missing");
  const validated = await driver.optionsSchema["~standard"].validate({ registryUrl: registry.url, ...options });
  if (validated.issues) throw new Error(JSON.stringify(validated.issues));
  return driver.create({
    instance: instance(environment),
    options: validated.value as AcpRegistryOptions,
    context: ctx.context,
  });
}

/**
 * Registers the scripted ACP agent as registry agent `scripted` with a binary distribution
 * for this platform: an archive holding `agent`, a shell launcher that records the ACP_TEST_*
 * environment it got and execs Node with the registry-declared args.
 */
function registerScriptedAgent(agent: ScriptedAcpAgentOptions, extra: { sha256?: boolean } = {}): void {
  const launcher = [
    "#!/bin/sh",
    'if [ -n "$ACP_TEST_REPORT" ]; then env | grep "^ACP_TEST_" | sort > "$ACP_TEST_REPORT"; fi',
    `exec "${process.execPath}" "$@"`,
    "",
  ].join("\n");
  const archive = shellScriptArchive("agent", launcher);
  registry.addFile("scripted-agent.tar.gz", archive.body);
  if (PLATFORM === null) throw new Error("this platform has no registry key");
  registry.setAgents([
    ...realAgents().entries,
    {
      id: "scripted",
      name: "Scripted ACP agent",
      version: "1.2.3",
      description: "The sdk's scripted ACP agent as a registry binary",
      distribution: {
        binary: {
          [PLATFORM]: {
            archive: "{{origin}}/scripted-agent.tar.gz",
            cmd: "./agent",
            ...(extra.sha256 === false ? {} : { sha256: archive.sha256 }),
            args: [SCRIPTED_ACP_AGENT_BIN, "--config", JSON.stringify(agent)],
            env: { ACP_TEST_FROM_REGISTRY: "registry", ACP_TEST_OVERRIDDEN: "registry" },
          },
        },
      },
    },
  ]);
}

/** What `switchyard registry install` does: prepare into the shared cache under the home. */
async function installAsOperator(agentId: string): Promise<void> {
  const catalog = new RegistryCatalog({
    cacheDir: acpRegistryCacheDir(ctx.context.paths.home),
    registryUrl: registry.url,
  });
  await catalog.prepare(agentId);
}

function grant(): McpEndpointGrant {
  const url = mcpServer?.url ?? "http://127.0.0.1:9/mcp";
  const token = mcpServer?.token ?? "registry-test-token";
  return {
    serverName: "switchyard",
    url,
    token,
    toolTimeoutMs: 600_000,
    blockingToolNames: ["delegate_task"],
    instructions: "Delegate with switchyard.",
    stdioBridge: {
      command: "switchyard",
      args: ["mcp-bridge"],
      env: { SWITCHYARD_MCP_URL: url, SWITCHYARD_MCP_TOKEN: token },
    },
  };
}

async function open(
  adapter: OrchestrationAdapter,
  recorder: AdapterEventRecorder,
  extra: { model?: string | null; cwd?: string } = {},
) {
  const session = await adapter.openSession({
    threadId: "thread-registry",
    providerSessionId: `ps-${++counter}`,
    cwd: extra.cwd ?? cwd,
    model: extra.model ?? null,
    runtimeMode: "full-access",
    interactionMode: "default",
    resumeCursor: null,
    mcp: grant(),
    emit: recorder.emit,
  });
  sessions.push(session);
  return session;
}

async function run(
  session: ProviderSession,
  recorder: AdapterEventRecorder,
  text: string,
  extra: Partial<TurnInput> = {},
) {
  const turnId = `registry-turn-${++counter}`;
  await session.startTurn({
    turnId,
    runId: `run-${turnId}`,
    text,
    instructions: null,
    model: null,
    runtimeMode: "full-access",
    interactionMode: "default",
    restartOfTurnId: null,
    ...extra,
  });
  const terminal = await recorder.waitFor("turn.terminal", (event) => event.turnId === turnId, 60_000);
  return { turnId, terminal, text: recorder.textOf(turnId), events: recorder.ofTurn(turnId) };
}

describe("acp-registry options", () => {
  it("rejects malformed options before anything starts, with the field and what is accepted", async () => {
    const driver = plugin.drivers[0]!;
    expect(plugin.specificationVersion).toBe("v1");
    expect(driver.driverKind).toBe("acp-registry");
    const bad = await driver.optionsSchema!["~standard"].validate({
      agentId: "Not An Id",
      registryUrl: "http://example.com/registry.json",
      commandOverride: "",
      env: { "BAD NAME": "x", GOOD: 3 },
      ignoreAgentCapabilities: ["loadSession", "steering"],
      extra: true,
    });
    const issues = (bad.issues ?? []).map((issue) => ({
      path: (issue.path ?? []).map((part) => String(typeof part === "object" ? part.key : part)).join("."),
      message: issue.message,
    }));
    const messageAt = (path: string) => issues.find((issue) => issue.path === path)?.message ?? "";
    expect(issues.map((issue) => issue.path)).toEqual(
      expect.arrayContaining([
        "agentId",
        "registryUrl",
        "commandOverride",
        "env.BAD NAME",
        "env.GOOD",
        "ignoreAgentCapabilities.1",
      ]),
    );
    expect(messageAt("agentId")).toMatch(/registry agent id/);
    expect(messageAt("registryUrl")).toMatch(/only https:\/\/ is accepted/);
    expect(issues.some((issue) => issue.message === 'Unrecognized key: "extra"')).toBe(true);
    const modes = await driver.optionsSchema!["~standard"].validate({
      agentId: "gemini",
      modes: { runtime: { "full-access": "yolo", turbo: "x" }, plan: 3 },
    });
    expect(
      (modes.issues ?? []).map((issue) =>
        (issue.path ?? []).map((part) => String(typeof part === "object" ? part.key : part)).join("."),
      ),
    ).toEqual(expect.arrayContaining(["modes.plan", "modes.runtime"]));
    expect(await driver.optionsSchema!["~standard"].validate({ agentId: "codex-acp" })).toEqual({
      value: { agentId: "codex-acp" },
    });
  });
});

describe("acp-registry plugin (scripted registry agent)", () => {
  it("reports an agent that is not installed from the catalog, without installing or spawning", async () => {
    registerScriptedAgent({});
    const adapter = await adapterFor({ agentId: "scripted" });
    const status = await adapter.probe();
    expect(status).toMatchObject({ installed: false, executable: false, authenticated: false });
    expect(status.message).toBe("scripted 1.2.3 is not installed yet. Run `switchyard registry install scripted`.");
    const missing = await (await adapterFor({ agentId: "no-such-agent" })).probe();
    expect(missing.installed).toBe(false);
    expect(missing.message).toMatch(
      /no-such-agent is not in the registry at http:\/\/127\.0\.0\.1:\d+\/registry\.json/,
    );
    expect(ctx.processes.spawned).toHaveLength(0);
    // Nothing was installed by the probes.
    const catalog = new RegistryCatalog({
      cacheDir: acpRegistryCacheDir(ctx.context.paths.home),
      registryUrl: registry.url,
    });
    expect(await catalog.list()).toEqual([]);

    // A session cannot start either; the typed error says what to run.
    const recorder = createEventRecorder();
    await expect(open(adapter, recorder)).rejects.toSatisfy(
      (error: unknown) =>
        hasErrorCode(error, "provider_unavailable") && /switchyard registry install scripted/.test(error.message),
    );
  });

  it("launches the operator's install with the registry's args and env, and injects MCP over http with the bearer header", async () => {
    mcpServer = await startTestMcpServer();
    registerScriptedAgent({
      name: "scripted",
      version: "1.2.3",
      models: ["small", "large"],
      modes: [
        { id: "default", name: "Default" },
        { id: "plan", name: "Plan" },
      ],
    });
    await installAsOperator("scripted");
    const report = path.join(cwd, "env-report.txt");
    const adapter = await adapterFor(
      { agentId: "scripted", env: { ACP_TEST_OVERRIDDEN: "options", ACP_TEST_REPORT: report } },
      { ACP_TEST_FROM_INSTANCE: "instance", ACP_TEST_FROM_REGISTRY: "instance" },
    );

    const status = await adapter.probe();
    expect(status).toMatchObject({ installed: true, executable: true, authenticated: true, version: "1.2.3" });
    // The disposable session/new told us the models and modes before any thread.
    expect(status.models).toEqual([
      { id: "small", displayName: "small", isDefault: true, source: "harness_catalog" },
      { id: "large", displayName: "large", source: "harness_catalog" },
    ]);
    expect(adapter.capabilities().sessions).toMatchObject({
      resume: true,
      modelSwitchInSession: true,
      runtimeModeSwitchInSession: true,
    });
    expect(adapter.capabilities().interactionModes).toEqual(["plan", "default"]);
    // Registry env over the instance's environment; the instance's `env` option over both.
    expect((await readFile(report, "utf8")).trim().split("\n")).toEqual([
      "ACP_TEST_FROM_INSTANCE=instance",
      "ACP_TEST_FROM_REGISTRY=registry",
      "ACP_TEST_OVERRIDDEN=options",
      `ACP_TEST_REPORT=${report}`,
    ]);
    // The probe's agent is gone.
    expect(await ctx.processes.spawned[0]?.exited).toBeDefined();

    const recorder = createEventRecorder();
    const session = await open(adapter, recorder, { model: "large" });
    const result = await run(session, recorder, '@state\n@report-mcp\n@mcp echo {"text":"from the registry agent"}');
    expect(result.terminal.status).toBe("completed");
    const [state, injected, mcp] = result.text.split("\n");
    expect(state).toBe("mode: default; model: large");
    expect(JSON.parse(injected!)).toEqual([
      {
        type: "http",
        name: "switchyard",
        url: mcpServer.url,
        headers: [{ name: "Authorization", value: `Bearer ${mcpServer.token}` }],
      },
    ]);
    expect(mcp).toBe("mcp: echo: from the registry agent");
    expect(mcpServer.calls).toEqual([{ tool: "echo", args: { text: "from the registry agent" } }]);
    const started = result.events.find((event) => event.type === "tool_call.started");
    expect(started).toMatchObject({ kind: "mcp", server: "switchyard", name: "mcp__switchyard__echo" });
    // The launch went to the installed copy under <home>/cache/acp-registry.
    const launched = ctx.processes.spawned.at(-1);
    expect(launched?.pid).toBeGreaterThan(0);
  });

  it("proves authentication with the readiness session: refused without an auth method, ready with one", async () => {
    registerScriptedAgent({ authMethods: [{ id: "api-key", name: "API key" }], requireAuth: true });
    await installAsOperator("scripted");
    const anonymous = await (await adapterFor({ agentId: "scripted" })).probe();
    expect(anonymous).toMatchObject({ installed: true, executable: true, authenticated: false });
    expect(anonymous.message).toMatch(/requires authentication \(methods: api-key\)/);

    const wrong = await (await adapterFor({ agentId: "scripted", authMethodId: "oauth" })).probe();
    expect(wrong).toMatchObject({ authenticated: false });
    expect(wrong.message).toBe(
      'Auth method "oauth" is not offered by the agent (offered: api-key). Set one of those as the instance\'s auth method.',
    );

    const keyed = await (await adapterFor({ agentId: "scripted", authMethodId: "api-key" })).probe();
    expect(keyed).toMatchObject({ installed: true, executable: true, authenticated: true });
  });

  it("gives an agent without http MCP the stdio bridge, with the token only in its env", async () => {
    registerScriptedAgent({ mcp: { http: false } });
    await installAsOperator("scripted");
    const adapter = await adapterFor({ agentId: "scripted" });
    await adapter.probe();
    expect(adapter.capabilities().tools.mcp).toEqual({ http: false, sse: false, stdio: true });
    const recorder = createEventRecorder();
    const session = await open(adapter, recorder);
    const result = await run(session, recorder, "@report-mcp");
    const [entry] = JSON.parse(result.text) as {
      command: string;
      args: string[];
      env: { name: string; value: string }[];
    }[];
    expect(entry).toEqual({
      name: "switchyard",
      command: "switchyard",
      args: ["mcp-bridge"],
      env: [
        { name: "SWITCHYARD_MCP_URL", value: "http://127.0.0.1:9/mcp" },
        { name: "SWITCHYARD_MCP_TOKEN", value: "registry-test-token" },
      ],
    });
  });

  it("ignores advertised features an instance lists in ignoreAgentCapabilities", async () => {
    registerScriptedAgent({ loadSession: true, fork: true, mcp: { http: true, sse: true } });
    await installAsOperator("scripted");
    const full = await adapterFor({ agentId: "scripted" });
    await full.probe();
    expect(full.capabilities().sessions.resume).toBe(true);
    expect(full.capabilities().threads.fork).toBe(true);

    const narrowed = await adapterFor({
      agentId: "scripted",
      ignoreAgentCapabilities: ["loadSession", "sessionCapabilities.fork", "mcpCapabilities.http"],
    });
    await narrowed.probe();
    const caps = narrowed.capabilities();
    expect(caps.sessions.resume).toBe(false);
    expect(caps.threads).toEqual({ readSnapshot: false, fork: false, forkFromTurn: false });
    expect(caps.tools.mcp).toEqual({ http: false, sse: true, stdio: true });
    // Ignoring http MCP also changes what a session injects: the bridge, not the http entry.
    const recorder = createEventRecorder();
    const session = await open(narrowed, recorder);
    const result = await run(session, recorder, "@report-mcp");
    expect(JSON.parse(result.text)[0]).toMatchObject({ command: "switchyard" });
    expect("forkThread" in session).toBe(false);
  });

  it("maps runtime modes to the agent's session modes as the instance says", async () => {
    registerScriptedAgent({
      modes: [
        { id: "default", name: "Default" },
        { id: "yolo", name: "YOLO" },
        { id: "planning", name: "Plan" },
      ],
    });
    await installAsOperator("scripted");
    const adapter = await adapterFor({
      agentId: "scripted",
      modes: { runtime: { "full-access": "yolo", "approval-required": "default" }, plan: "planning" },
    });
    await adapter.probe();
    expect(adapter.capabilities().interactionModes).toEqual(["plan", "default"]);
    const recorder = createEventRecorder();
    const session = await open(adapter, recorder);
    expect((await run(session, recorder, "@state")).text).toBe("mode: yolo; model: none");
    expect((await run(session, recorder, "@state", { runtimeMode: "approval-required" })).text).toBe(
      "mode: default; model: none",
    );
    expect((await run(session, recorder, "@state", { interactionMode: "plan" })).text).toBe(
      "mode: planning; model: none",
    );
  });

  it("a command override runs without an install and keeps the registry-declared args and env", async () => {
    registerScriptedAgent({ name: "overridden" });
    const report = path.join(cwd, "override-report.txt");
    const launcher = path.join(cwd, "local-agent.sh");
    const { writeFile, chmod } = await import("node:fs/promises");
    await writeFile(
      launcher,
      `#!/bin/sh\nenv | grep "^ACP_TEST_FROM_REGISTRY" > "${report}"\nexec "${process.execPath}" "$@"\n`,
    );
    await chmod(launcher, 0o755);
    const adapter = await adapterFor({ agentId: "scripted", commandOverride: launcher });
    const status = await adapter.probe();
    expect(status).toMatchObject({ installed: true, executable: true, authenticated: true });
    expect((await readFile(report, "utf8")).trim()).toBe("ACP_TEST_FROM_REGISTRY=registry");
    expect(ctx.processes.spawned).toHaveLength(1);

    const broken = await (
      await adapterFor({ agentId: "scripted", commandOverride: path.join(cwd, "missing") })
    ).probe();
    expect(broken.installed).toBe(false);
    expect(broken.message).toMatch(/The command override ".*missing" for scripted is not an executable file/);
  });
});

describe("tested agents (harness data)", () => {
  it("an instance of a tested agent reports the tested range, and warns outside it; other agents report none", async () => {
    registerScriptedAgent({});
    // An agent that answers initialize as codex-acp 9.9.9 would, in place of the registry's codex-acp.
    const launcher = path.join(cwd, "newer-codex-acp.sh");
    const { writeFile, chmod } = await import("node:fs/promises");
    await writeFile(
      launcher,
      `#!/bin/sh\nexec "${process.execPath}" "${SCRIPTED_ACP_AGENT_BIN}" --config '${JSON.stringify({ name: "codex-acp", version: "9.9.9" })}'\n`,
    );
    await chmod(launcher, 0o755);
    const status = await (await adapterFor({ agentId: "codex-acp", commandOverride: launcher })).probe();
    expect(status).toMatchObject({ installed: true, executable: true, version: "9.9.9" });
    expect(status.harness).toMatchObject({
      displayName: "codex-acp",
      source: "configured",
      location: launcher,
      version: "9.9.9",
      testedVersions: "~2.6.0",
      inTestedRange: false,
    });
    expect(status.warnings).toEqual([
      expect.stringContaining(
        "codex-acp 9.9.9 (" + launcher + ") is outside the versions this plugin was tested with (~2.6.0)",
      ),
    ]);

    const untracked = await (await adapterFor({ agentId: "scripted", commandOverride: launcher })).probe();
    expect(untracked.harness).toBeUndefined();
    expect(untracked.warnings).toBeUndefined();
  });
});

describe("MCP tool call recognition", () => {
  it("reads the shapes real ACP agents send, only for the injected server", () => {
    const servers = ["switchyard"];
    // mcp__<server>__<tool> names (claude-agent-acp, the scripted agent)
    expect(mcpServerOf({ toolCallId: "1", title: "x", name: "mcp__switchyard__delegate_task" }, servers)).toEqual({
      server: "switchyard",
      tool: "delegate_task",
    });
    // codex-acp: title "Tool: <server>/<tool>", rawInput {server, tool, arguments}
    expect(
      mcpServerOf(
        {
          toolCallId: "call_1",
          title: "Tool: switchyard/echo",
          rawInput: { server: "switchyard", tool: "echo", arguments: {} },
        },
        servers,
      ),
    ).toEqual({
      server: "switchyard",
      tool: "echo",
    });
    // Gemini CLI: id mcp_<server>_<tool>__…, title "<tool> (<server> MCP Server)"
    expect(
      mcpServerOf(
        {
          toolCallId: "mcp_switchyard_echo__mcp_switchyard_echo_1795996411097_0",
          title: "echo (switchyard MCP Server)",
        },
        servers,
      ),
    ).toEqual({
      server: "switchyard",
      tool: "echo",
    });
    // opencode: "<server>_<tool>"
    expect(mcpServerOf({ toolCallId: "t", title: "switchyard_delegate_task" }, servers)).toEqual({
      server: "switchyard",
      tool: "delegate_task",
    });
    // Native tools, and other servers' loose spellings, are not MCP calls of ours.
    expect(mcpServerOf({ toolCallId: "run_shell_command__1", title: "echo hi" }, servers)).toBeNull();
    expect(
      mcpServerOf({ toolCallId: "x", title: "Tool: other/echo", rawInput: { server: "other", tool: "echo" } }, servers),
    ).toBeNull();
    expect(mcpServerOf({ toolCallId: "mcp_switchyard_echo__1", title: "echo (switchyard MCP Server)" }, [])).toBeNull();
  });
});

describe("acp-registry plugin (real agents from npm)", () => {
  it("Gemini CLI: readiness session lists its models; a model is switched with session/set_model", async () => {
    const agents = realAgents();
    registry.setAgents(agents.entries);
    const server = await ScriptedModelServer.start();
    const home = await createGeminiHome({ modelServerUrl: server.url });
    cleanups.push(async () => {
      await server.close();
      await home.cleanup();
    });
    const adapter = await adapterFor(
      { agentId: "gemini", commandOverride: agents.gemini.command, authMethodId: "gemini-api-key" },
      { ...home.env, ...agents.gemini.env },
    );
    const status = await adapter.probe();
    expect(status).toMatchObject({
      installed: true,
      executable: true,
      authenticated: true,
      version: agents.gemini.version,
    });
    expect(status.harness).toMatchObject({
      packageName: "@google/gemini-cli",
      testedVersions: "~0.61.0",
      inTestedRange: true,
    });
    expect(status.models.find((model) => model.isDefault)?.id).toBe("auto");
    expect(status.models.map((model) => model.id)).toContain("gemini-2.5-pro");
    const caps = adapter.capabilities();
    expect(caps.sessions).toMatchObject({ resume: true, modelSwitchInSession: true, runtimeModeSwitchInSession: true });
    expect(caps.threads).toEqual({ readSnapshot: true, fork: false, forkFromTurn: false });
    expect(caps.tools.mcp).toEqual({ http: true, sse: true, stdio: true });
    expect(caps.interactionModes).toEqual(["plan", "default"]);
    // Without the API-key method, Gemini refuses the session: not authenticated.
    const anonymous = await (
      await adapterFor(
        { agentId: "gemini", commandOverride: agents.gemini.command },
        { ...home.env, ...agents.gemini.env, GEMINI_API_KEY: "" },
      )
    ).probe();
    expect(anonymous.authenticated).toBe(false);

    const recorder = createEventRecorder();
    const session = await open(adapter, recorder, { model: "gemini-2.5-pro", cwd: home.cwd });
    const result = await run(session, recorder, "say it @@reply switched");
    expect(result.terminal.status).toBe("completed");
    expect(result.text).toContain("switched");
    const main = server.requests.filter((request) => request.api === "gemini" && !request.sideCall);
    expect(main.at(-1)?.model).toBe("gemini-2.5-pro");
  });

  it("codex-acp 2.x: negotiated from initialize and session/new; shell calls are command items, MCP calls reach the injected endpoint", async () => {
    mcpServer = await startTestMcpServer();
    const { adapter, server, home, agents } = await codexAcp();
    const status = await adapter.probe();
    expect(status).toMatchObject({
      installed: true,
      executable: true,
      authenticated: true,
      version: agents.codexAcp.version,
    });
    expect(agents.codexAcp.version).toMatch(/^2\./);
    // What `switchyard providers --json` shows: the npm package the override points into, in the tested range.
    expect(status.harness).toMatchObject({
      displayName: "codex-acp",
      packageName: "@agentclientprotocol/codex-acp",
      version: agents.codexAcp.version,
      testedVersions: "~2.6.0",
      inTestedRange: true,
    });
    expect(status.warnings).toBeUndefined();
    expect(status.models.find((model) => model.isDefault)?.id).toBe(home.model);
    const caps = adapter.capabilities();
    expect(caps.sessions).toMatchObject({ resume: true, modelSwitchInSession: true, runtimeModeSwitchInSession: true });
    // 2.x advertises session/fork and subagent sessions (the 0.x line did neither).
    expect(caps.threads).toEqual({ readSnapshot: true, fork: true, forkFromTurn: false });
    expect(caps.identity.nativeThreadIds).toBe("strong");
    expect(caps.subagents).toEqual({
      native: "observed",
      control: "observe",
      reportsUsage: false,
      reportsTranscript: true,
      exposesChildThreadIds: false,
    });
    expect(caps.tools.mcp).toEqual({ http: true, sse: false, stdio: true });
    expect(caps.tools.shell).toBe(false);
    // Its plan is a `collaboration_mode` config option, a category ACP does not define.
    expect(caps.interactionModes).toEqual(["default"]);

    const recorder = createEventRecorder();
    const session = await open(adapter, recorder, { cwd: home.cwd });
    expect("forkThread" in session).toBe(true);
    const result = await run(
      session,
      recorder,
      'run it @@shell echo from-codex-acp @@then @@tool echo {"text":"via switchyard"} @@then @@reply tools said {{output}}',
    );
    expect(result.terminal.status).toBe("completed");
    const started = result.events.filter((event) => event.type === "tool_call.started");
    expect(started.find((event) => event.kind === "command")).toMatchObject({ title: "echo from-codex-acp" });
    expect(started.find((event) => event.kind === "mcp")).toMatchObject({
      server: "switchyard",
      name: "mcp__switchyard__echo",
    });
    // The injected endpoint, with the session's bearer token, is what the agent called.
    expect(mcpServer.calls).toEqual([{ tool: "echo", args: { text: "via switchyard" } }]);
    expect(result.text).toContain("tools said");
    expect(result.text).toContain("via switchyard");
    // With the client's `session.notices`, its warnings are warnings, not assistant text.
    expect(recorder.events.filter((event) => event.type === "warning").map((event) => event.message)).toEqual(
      expect.arrayContaining([expect.stringContaining("Model metadata for `fake-model` not found")]),
    );
    expect(result.text).not.toContain("Model metadata");
    // full-access switched the agent into the preset the instance maps it to.
    expect(server.requests.at(-1)?.headers["x-codex-turn-metadata"]).toContain('"sandbox_mode":"danger-full-access"');
  });

  it("codex-acp 2.x: its own sub-agents are observed (subagent_update), never adopted", async () => {
    const { adapter, home } = await codexAcp();
    const recorder = createEventRecorder();
    const session = await open(adapter, recorder, { cwd: home.cwd });
    // The model spawns a Codex sub-agent (the scripted server answers the child too) and waits for it.
    const spawn = JSON.stringify({ message: "child task @@reply child-done" });
    const wait = JSON.stringify({ targets: ["{{output.agent_id}}"], timeout_ms: 30_000 });
    const result = await run(
      session,
      recorder,
      `delegate it @@tool spawn_agent ${spawn} @@then @@tool wait_agent ${wait} @@then @@reply parent saw {{output}}`,
    );
    expect(result.terminal.status).toBe("completed");
    expect(result.text).toContain("child-done");
    const observed = result.events.filter((event) => event.type === "subagent.observed");
    // Running (again when its model arrives after its state: codex-acp sends them in either order), then completed.
    expect(observed.at(-1)?.status).toBe("completed");
    expect(observed.length).toBeGreaterThanOrEqual(2);
    expect(new Set(observed.slice(0, -1).map((event) => event.status))).toEqual(new Set(["running"]));
    expect(new Set(observed.map((event) => event.nativeId)).size).toBe(1);
    expect(observed[0]).toMatchObject({
      title: expect.stringContaining("child task"),
      task: expect.stringContaining("child task"),
    });
    expect(observed.at(-1)).toMatchObject({ model: "fake-model" });
    expect(observed[0]).not.toHaveProperty("nativeThreadId");
    // Its own session's text is its transcript, the last message its summary.
    expect(observed.at(-1)).toMatchObject({ summary: "child-done" });
    const messages = result.events.filter((event) => event.type === "subagent.message");
    expect(messages).toEqual([expect.objectContaining({ nativeId: observed[0]!.nativeId, text: "child-done" })]);
    // The child's own output is not part of the parent's conversation.
    expect(result.text).not.toMatch(/^child-done/);
  });
});

/** codex-acp 2.x from npm as registry agent `codex-acp`, against the scripted model, with its modes mapped. */
async function codexAcp() {
  const agents = realAgents();
  registry.setAgents(agents.entries);
  const server = await ScriptedModelServer.start();
  const home = await createCodexHome({ modelServerUrl: server.url });
  cleanups.push(async () => {
    await server.close();
    await home.cleanup();
  });
  const adapter = await adapterFor(
    { agentId: "codex-acp", commandOverride: agents.codexAcp.command, modes: CODEX_ACP_MODES },
    home.env,
  );
  return { adapter, server, home, agents };
}
