import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { decodeCapabilities } from "@switchyard/sdk";
import {
  CODEX_APP_SERVER_CAPABILITIES,
  CODEX_EXEC_CAPABILITIES,
  CODEX_WIRE_VERSION,
  MCP_TOKEN_ENV_VAR,
  appServerModeSettings,
  codexExecOptionsSchema,
  codexMcpServers,
  codexOptionsSchema,
  codexThreadMcpConfig,
  execModeSettings,
  installedCodexBinary,
} from "../src/index.js";
import { grantFor } from "./codex-lab.js";

// Pure pieces of the plugin: the MCP entries, the mode mapping, option validation, the
// capability declarations, and the generated wire types against the pinned binary.

describe("MCP injection config", () => {
  it("splits the Switchyard server into a main entry and a direct entry carrying t3_thread_wait", () => {
    const servers = codexMcpServers(grantFor("http://127.0.0.1:1234/mcp", "secret-token"));
    expect(servers).toEqual({
      switchyard: {
        url: "http://127.0.0.1:1234/mcp",
        bearer_token_env_var: MCP_TOKEN_ENV_VAR,
        startup_timeout_sec: 20,
        tool_timeout_sec: 150,
        default_tools_approval_mode: "approve",
        disabled_tools: ["t3_thread_wait"],
      },
      "switchyard-direct": {
        url: "http://127.0.0.1:1234/mcp",
        bearer_token_env_var: MCP_TOKEN_ENV_VAR,
        startup_timeout_sec: 20,
        tool_timeout_sec: 150,
        default_tools_approval_mode: "approve",
        enabled_tools: ["t3_thread_wait"],
        omit_tools_from: ["code_mode", "deferred"],
      },
    });
    expect(JSON.stringify(servers)).not.toContain("secret-token");
    expect(Object.keys(codexThreadMcpConfig(grantFor("http://127.0.0.1:1/mcp", "t", "t3-code")))).toEqual([
      "mcp_servers.t3-code",
      "mcp_servers.t3-code-direct",
    ]);
    expect(codexThreadMcpConfig(null)).toEqual({});
    expect(() => codexMcpServers(grantFor("http://127.0.0.1:1/mcp", "t", "bad.name"))).toThrowError(
      expect.objectContaining({ code: "invalid_input" }),
    );
  });

  it("keeps the tool timeout above the grant's", () => {
    const grant = { ...grantFor("http://127.0.0.1:1/mcp", "t"), toolTimeoutMs: 130_001 };
    expect(codexMcpServers(grant).switchyard!.tool_timeout_sec * 1000).toBeGreaterThan(grant.toolTimeoutMs);
  });
});

describe("runtime modes", () => {
  it("maps app-server modes to approval policy and sandbox", () => {
    expect(appServerModeSettings("approval-required")).toMatchObject({
      approvalPolicy: "untrusted",
      sandbox: "workspace-write",
      autoAcceptFileChanges: false,
    });
    expect(appServerModeSettings("auto-accept-edits")).toMatchObject({
      approvalPolicy: "untrusted",
      sandbox: "workspace-write",
      autoAcceptFileChanges: true,
      autoAcceptAll: false,
    });
    expect(appServerModeSettings("full-access")).toMatchObject({
      approvalPolicy: "never",
      sandbox: "danger-full-access",
      sandboxPolicy: { type: "dangerFullAccess" },
    });
  });

  it("maps exec modes to what codex exec can enforce without asking", () => {
    expect(execModeSettings("approval-required")).toEqual({
      approvalPolicy: "never",
      sandboxMode: "read-only",
      applied: "approval-required",
    });
    expect(execModeSettings("auto-accept-edits").applied).toBe("approval-required");
    expect(execModeSettings("full-access")).toEqual({
      approvalPolicy: "never",
      sandboxMode: "danger-full-access",
      applied: "full-access",
    });
  });
});

describe("options", () => {
  it("validates codex options with defaults and names unknown keys", async () => {
    expect(await codexOptionsSchema["~standard"].validate({})).toEqual({
      value: { config: {}, requestTimeoutMs: 30_000, interruptTimeoutMs: 15_000 },
    });
    expect(
      await codexOptionsSchema["~standard"].validate({
        codexPath: "/opt/codex",
        config: { model_reasoning_effort: "low" },
      }),
    ).toMatchObject({
      value: { codexPath: "/opt/codex", config: { model_reasoning_effort: "low" } },
    });
    const bad = await codexOptionsSchema["~standard"].validate({
      codexPath: "",
      config: { x: null },
      requestTimeoutMs: -1,
      extra: 1,
    });
    expect(bad.issues?.map((issue) => issue.path?.[0] ?? issue.message)).toEqual([
      "codexPath",
      "config",
      "requestTimeoutMs",
      'Unrecognized key: "extra"',
    ]);
  });

  it("validates codex-exec options", async () => {
    expect(await codexExecOptionsSchema["~standard"].validate({})).toEqual({
      value: { config: {}, skipGitRepoCheck: true },
    });
    expect((await codexExecOptionsSchema["~standard"].validate({ skipGitRepoCheck: "yes" })).issues?.[0]?.path).toEqual(
      ["skipGitRepoCheck"],
    );
  });
});

describe("capability declarations", () => {
  it("decode without warnings and say what each driver really does", () => {
    const appServer = decodeCapabilities(CODEX_APP_SERVER_CAPABILITIES);
    const exec = decodeCapabilities(CODEX_EXEC_CAPABILITIES);
    expect(appServer.warnings).toEqual([]);
    expect(exec.warnings).toEqual([]);
    expect(appServer.capabilities.turns).toMatchObject({ activeSteering: true, interrupt: true });
    expect(appServer.capabilities.threads).toEqual({ readSnapshot: true, fork: true, forkFromTurn: true });
    expect(exec.capabilities.turns).toMatchObject({
      activeSteering: false,
      interrupt: true,
      steeringByInterruptRestart: true,
    });
    expect(exec.capabilities.threads).toEqual({ readSnapshot: false, fork: false, forkFromTurn: false });
    expect(exec.capabilities.runtimeRequests).toEqual({ approvals: false, userInputQuestions: false });
  });
});

describe("generated wire types", () => {
  const wireDir = fileURLToPath(new URL("../src/codex-wire", import.meta.url));

  function files(dir: string): Map<string, string> {
    const out = new Map<string, string>();
    const walk = (current: string) => {
      for (const entry of readdirSync(current)) {
        const path = join(current, entry);
        if (statSync(path).isDirectory()) walk(path);
        else out.set(relative(dir, path), readFileSync(path, "utf8"));
      }
    };
    walk(dir);
    return out;
  }

  it("come from the pinned Codex binary and are up to date (npm run generate:wire)", () => {
    const binary = installedCodexBinary();
    expect(binary?.packageVersion).toBe(CODEX_WIRE_VERSION);
    const out = mkdtempSync(join(tmpdir(), "codex-wire-check-"));
    try {
      execFileSync(
        process.execPath,
        [fileURLToPath(new URL("../scripts/generate-wire.mjs", import.meta.url)), "--out", join(out, "wire")],
        { stdio: "pipe" },
      );
      const fresh = files(join(out, "wire"));
      const committed = files(wireDir);
      expect([...committed.keys()].sort()).toEqual([...fresh.keys()].sort());
      const stale = [...fresh].filter(([path, text]) => committed.get(path) !== text).map(([path]) => path);
      expect(stale).toEqual([]);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
