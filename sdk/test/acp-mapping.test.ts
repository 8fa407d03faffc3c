import { mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { hasErrorCode, type McpEndpointGrant, type ProviderInstanceDescriptor } from "@switchyard/spec";
import {
  ConfinedFileSystem,
  advertisedEfforts,
  advertisedModels,
  automaticOutcome,
  buildAcpMcpServers,
  createAcpDriver,
  negotiateAcpCapabilities,
  outcomeForDecision,
  toolKindOf,
  type AcpFlavor,
  type acpSdk,
} from "../src/acp/index.js";
import {
  createAcpTestContext,
  createEventRecorder,
  scriptedAgentChannelFactory,
} from "../../testkit/src/acp-agent/index.js";

const grant: McpEndpointGrant = {
  serverName: "switchyard",
  url: "http://127.0.0.1:1234/mcp",
  token: "tok-123",
  toolTimeoutMs: 1,
  blockingToolNames: [],
  instructions: "",
  stdioBridge: { command: "switchyard", args: ["mcp-bridge"], env: { SWITCHYARD_MCP_TOKEN: "tok-123" } },
};

const OPTIONS = [
  { optionId: "a1", name: "Allow", kind: "allow_once" as const },
  { optionId: "a2", name: "Always", kind: "allow_always" as const },
  { optionId: "r1", name: "Reject", kind: "reject_once" as const },
];

describe("ACP mapping", () => {
  it("refuses a stdio bridge that carries the token in argv", () => {
    const leaky = { ...grant, stdioBridge: { ...grant.stdioBridge, args: ["--token", "tok-123"] } };
    expect(() => buildAcpMcpServers(leaky, { http: false })).toThrow(/environment/);
    expect(buildAcpMcpServers(null, { http: true })).toEqual({ servers: [], injection: "none" });
    expect(buildAcpMcpServers(grant, { http: true }).injection).toBe("http");
    expect(buildAcpMcpServers(grant, { http: true }, "stdio-bridge").injection).toBe("stdio-bridge");
  });

  it("maps decisions to option kinds, with fallbacks", () => {
    expect(outcomeForDecision("accept", OPTIONS)).toEqual({ outcome: "selected", optionId: "a1" });
    expect(outcomeForDecision("accept_for_session", OPTIONS)).toEqual({ outcome: "selected", optionId: "a2" });
    expect(outcomeForDecision("decline", OPTIONS)).toEqual({ outcome: "selected", optionId: "r1" });
    expect(outcomeForDecision("decline", OPTIONS.slice(0, 2))).toEqual({ outcome: "cancelled" });
    expect(outcomeForDecision("cancel", OPTIONS)).toEqual({ outcome: "cancelled" });
    expect(automaticOutcome("approval-required", "edit", OPTIONS)).toBeNull();
    expect(automaticOutcome("auto-accept-edits", "execute", OPTIONS)).toBeNull();
    expect(automaticOutcome("auto-accept-edits", "move", OPTIONS)).toEqual({ outcome: "selected", optionId: "a1" });
    expect(automaticOutcome("full-access", "execute", OPTIONS.slice(2))).toBeNull();
  });

  it("maps tool kinds", () => {
    expect(toolKindOf({ toolCallId: "1", title: "t", kind: "read" })).toBe("file_read");
    expect(toolKindOf({ toolCallId: "1", title: "t", kind: "delete" })).toBe("file_change");
    expect(toolKindOf({ toolCallId: "1", title: "t", kind: "fetch" })).toBe("web");
    expect(toolKindOf({ toolCallId: "1", title: "t", kind: "think" })).toBe("other");
    expect(toolKindOf({ toolCallId: "1", title: "t", kind: "execute", name: "mcp__switchyard__delegate_task" })).toBe(
      "mcp",
    );
  });

  it("negotiates only what was advertised", () => {
    const bare = negotiateAcpCapabilities({ initialize: { protocolVersion: 1 } });
    expect(bare).toMatchObject({
      sessions: { resume: false },
      threads: { readSnapshot: false, fork: false, forkFromTurn: false },
      tools: { mcp: { http: false, sse: false, stdio: true } },
    });
    expect(bare.interactionModes).toBeUndefined();
    const rich = negotiateAcpCapabilities({
      initialize: {
        protocolVersion: 1,
        agentCapabilities: { sessionCapabilities: { resume: {}, fork: {} }, mcpCapabilities: { sse: true } },
      },
      modes: {
        currentModeId: "ask",
        availableModes: [
          { id: "ask", name: "Ask" },
          { id: "architect", name: "Architect" },
        ],
      },
      configOptions: [],
    });
    expect(rich).toMatchObject({
      sessions: { resume: true, modelSwitchInSession: false, runtimeModeSwitchInSession: true },
      threads: { readSnapshot: false, fork: true, forkFromTurn: false },
      tools: { mcp: { http: false, sse: true } },
      interactionModes: ["default"],
    });
    expect(bare.subagents).toEqual({
      native: "none",
      control: "none",
      reportsUsage: false,
      reportsTranscript: false,
      exposesChildThreadIds: false,
    });
    // The subagent sessions draft, as codex-acp 2.x advertises it: observed, never adopted.
    const withSubagents = negotiateAcpCapabilities({
      initialize: {
        protocolVersion: 1,
        agentCapabilities: { sessionCapabilities: { subagents: {} } as acpSdk.SessionCapabilities },
      },
    });
    expect(withSubagents.subagents).toEqual({
      native: "observed",
      control: "observe",
      reportsUsage: false,
      reportsTranscript: true,
      exposesChildThreadIds: false,
    });
    expect(
      negotiateAcpCapabilities(
        {
          initialize: { protocolVersion: 1 },
          modes: { currentModeId: "ask", availableModes: [{ id: "architect", name: "Architect" }] },
        },
        { plan: "architect" },
      ).interactionModes,
    ).toEqual(["plan", "default"]);
  });

  it("confines file access to the root", async () => {
    const root = await realpath(await mkdtemp(path.join(os.tmpdir(), "confined-")));
    try {
      await writeFile(path.join(root, "a.txt"), "1\n2\n3\n4");
      await symlink("/etc", path.join(root, "etc-link"));
      const fs = new ConfinedFileSystem(root);
      expect(await fs.read(path.join(root, "a.txt"), 2, 2)).toBe("2\n3");
      await expect(fs.read("a.txt")).rejects.toSatisfy((error: unknown) => hasErrorCode(error, "invalid_input"));
      await expect(fs.read(path.join(root, "etc-link/hostname"))).rejects.toSatisfy((error: unknown) =>
        hasErrorCode(error, "invalid_input"),
      );
      await expect(fs.read(path.join(root, "missing.txt"))).rejects.toSatisfy((error: unknown) =>
        hasErrorCode(error, "not_found"),
      );
      await expect(fs.write(path.join(root, "..", "escape.txt"), "x")).rejects.toSatisfy((error: unknown) =>
        hasErrorCode(error, "invalid_input"),
      );
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe("in-process channel", () => {
  it("runs a flavor against the scripted agent without a process", async () => {
    const ctx = await createAcpTestContext();
    const cwd = await realpath(await mkdtemp(path.join(os.tmpdir(), "acp-inproc-")));
    try {
      const flavor: AcpFlavor<Record<string, never>> = {
        driverKind: "acp-inproc",
        displayName: "In-process",
        capabilities: {},
        resolveLaunch: () => ({ command: "unused", args: [] }),
      };
      const instance: ProviderInstanceDescriptor = {
        id: "inproc",
        driver: "acp-inproc",
        displayName: "x",
        homePath: null,
        environment: {},
        customModels: [],
      };
      const driver = createAcpDriver(flavor, { channelFactory: scriptedAgentChannelFactory({ mcp: { http: false } }) });
      const adapter = await driver.create({ instance, options: {}, context: ctx.context });
      expect(await adapter.probe()).toMatchObject({ executable: true });
      const recorder = createEventRecorder();
      const session = await adapter.openSession({
        threadId: "t",
        providerSessionId: "p",
        cwd,
        model: null,
        runtimeMode: "full-access",
        interactionMode: "default",
        resumeCursor: null,
        mcp: grant,
        emit: recorder.emit,
      });
      await session.startTurn({
        turnId: "turn-1",
        runId: "run-1",
        text: "@say in process\n@permission execute ls",
        instructions: null,
        model: null,
        runtimeMode: "full-access",
        interactionMode: "default",
        restartOfTurnId: null,
      });
      expect((await recorder.waitFor("turn.terminal")).status).toBe("completed");
      expect(recorder.textOf("turn-1")).toBe("in process\npermission: selected allow-once");
      expect(ctx.processes.spawned).toHaveLength(0);
      await session.close();
    } finally {
      await ctx.dispose();
      await rm(cwd, { recursive: true, force: true });
    }
  });
});

describe("ACP effort", () => {
  const select = (category: string, currentValue: string, values: string[]) => ({
    id: category,
    name: category,
    category,
    type: "select" as const,
    currentValue,
    options: values.map((value) => ({ value, name: value })),
  });

  it("offers an agent's thought_level values as the efforts of every model it lists", () => {
    const agent = {
      configOptions: [
        select("model", "m1", ["m1", "m2"]),
        select("thought_level", "medium", ["low", "medium", "high"]),
      ],
      models: null,
    };
    expect(advertisedModels(agent)).toEqual([
      {
        id: "m1",
        displayName: "m1",
        isDefault: true,
        source: "harness_catalog",
        efforts: ["low", "medium", "high"],
        defaultEffort: "medium",
      },
      {
        id: "m2",
        displayName: "m2",
        source: "harness_catalog",
        efforts: ["low", "medium", "high"],
        defaultEffort: "medium",
      },
    ]);
    expect(advertisedEfforts({ configOptions: [select("model", "m1", ["m1"])] })).toEqual({});
  });
});
