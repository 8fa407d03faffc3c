import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, sep } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import {
  createClaudeHome,
  createCodexHome,
  createGeminiHome,
  createOpenCodeHome,
  createPiHome,
  killAllHarnessProcesses,
  liveHarnessProcesses,
  resolveHarnessBinary,
  spawnHarness,
} from "../src/index.js";
import type { HarnessHome } from "../src/index.js";

const SERVER = "http://127.0.0.1:4555";
const homes: HarnessHome[] = [];
const track = <T extends HarnessHome>(home: T): T => {
  homes.push(home);
  return home;
};
afterAll(async () => {
  await Promise.all(homes.map((h) => h.cleanup()));
});
afterEach(async () => {
  await killAllHarnessProcesses();
});

function expectIsolated(home: HarnessHome): void {
  const tmp = tmpdir();
  expect(home.root.startsWith(tmp) || home.root.startsWith("/tmp")).toBe(true);
  for (const key of ["HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "TMPDIR"]) {
    expect(home.env[key]?.startsWith(home.root + sep), key).toBe(true);
  }
  expect(home.home.startsWith(home.root + sep)).toBe(true);
  expect(home.cwd.startsWith(home.root + sep)).toBe(true);
  expect(home.env["PATH"]).toBe(process.env["PATH"]);
}

describe("harness homes", () => {
  it("never inherit the parent's credentials or config", async () => {
    process.env["OPENAI_API_KEY"] = "sk-real-key-must-not-leak";
    try {
      const all = await Promise.all([
        createCodexHome({ modelServerUrl: SERVER }),
        createPiHome({ modelServerUrl: SERVER }),
        createClaudeHome({ modelServerUrl: SERVER }),
        createOpenCodeHome({ modelServerUrl: SERVER }),
        createGeminiHome({ modelServerUrl: SERVER }),
      ]);
      for (const home of all) {
        track(home);
        expectIsolated(home);
        expect(home.env["OPENAI_API_KEY"]).toBeUndefined();
        expect(JSON.stringify(home.env)).not.toContain("sk-real-key-must-not-leak");
      }
    } finally {
      delete process.env["OPENAI_API_KEY"];
    }
  });

  it("Codex: config.toml with a custom responses provider, MCP servers and a bearer env var", async () => {
    const home = track(
      await createCodexHome({
        modelServerUrl: `${SERVER}/v1`,
        mcpServers: { "my-probe": { url: "http://127.0.0.1:9/mcp", bearerToken: "tok" } },
      }),
    );
    expect(home.env["CODEX_HOME"]).toBe(home.home);
    expect(home.env[home.apiKeyEnvVar]).toMatch(/dummy/);
    const toml = await readFile(home.configPath, "utf8");
    expect(toml).toContain('model = "fake-model"');
    expect(toml).toContain('model_provider = "fake"');
    expect(toml).toContain('approval_policy = "never"');
    expect(toml).toContain("[model_providers.fake]");
    expect(toml).toContain(`base_url = "${SERVER}/v1"`);
    expect(toml).toContain('wire_api = "responses"');
    expect(toml).toContain(`env_key = "${home.apiKeyEnvVar}"`);
    expect(toml).toContain(
      '[mcp_servers.my-probe]\nurl = "http://127.0.0.1:9/mcp"\ndefault_tools_approval_mode = "approve"',
    );
    expect(toml).toContain('bearer_token_env_var = "SWITCHYARD_MCP_TOKEN_MY_PROBE"');
    expect(home.env["SWITCHYARD_MCP_TOKEN_MY_PROBE"]).toBe("tok");
    expect(home.execArgs("hi")).toEqual(["exec", "--skip-git-repo-check", "--json", "hi"]);
  });

  it("Pi: models.json for each API and the --model value", async () => {
    const chat = track(await createPiHome({ modelServerUrl: SERVER }));
    expect(chat.env["PI_CODING_AGENT_DIR"]).toBe(chat.home);
    expect(chat.model).toBe("fake/fake-model");
    expect(chat.args).toEqual(["--offline", "--model", "fake/fake-model"]);
    const models = JSON.parse(await readFile(join(chat.home, "models.json"), "utf8")) as {
      providers: Record<string, { baseUrl: string; api: string; apiKey: string }>;
    };
    expect(models.providers["fake"]).toMatchObject({
      baseUrl: `${SERVER}/v1`,
      api: "openai-completions",
      apiKey: expect.any(String),
    });
    const settings = JSON.parse(await readFile(join(chat.home, "settings.json"), "utf8")) as Record<string, unknown>;
    expect(settings["retry"]).toEqual({ enabled: false });

    const anthropic = track(await createPiHome({ modelServerUrl: SERVER, api: "anthropic-messages" }));
    const anthropicModels = JSON.parse(await readFile(join(anthropic.home, "models.json"), "utf8")) as {
      providers: Record<string, { baseUrl: string }>;
    };
    expect(anthropicModels.providers["fake"]?.baseUrl).toBe(SERVER);
    expect(anthropic.model).toBe("fake/claude-fake");
  });

  it("Claude: env for offline use, IS_SANDBOX as root, an --mcp-config file", async () => {
    const home = track(
      await createClaudeHome({
        modelServerUrl: `${SERVER}/v1`,
        mcpServers: { probe: { url: "http://127.0.0.1:9/mcp", bearerToken: "t" } },
      }),
    );
    expect(home.env).toMatchObject({
      CLAUDE_CONFIG_DIR: home.home,
      ANTHROPIC_BASE_URL: SERVER,
      ANTHROPIC_API_KEY: expect.stringContaining("dummy"),
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      ENABLE_TOOL_SEARCH: "false",
    });
    expect(home.env["IS_SANDBOX"]).toBe(process.getuid?.() === 0 ? "1" : undefined);
    const mcp = JSON.parse(await readFile(home.mcpConfigPath ?? "", "utf8")) as unknown;
    expect(mcp).toEqual({
      mcpServers: { probe: { type: "http", url: "http://127.0.0.1:9/mcp", headers: { Authorization: "Bearer t" } } },
    });
    expect(home.args).toEqual(expect.arrayContaining(["--strict-mcp-config", "--allowedTools", "Bash,mcp__probe"]));
  });

  it("OpenCode: OPENCODE_CONFIG_CONTENT with the fake provider and remote MCP", async () => {
    const home = track(
      await createOpenCodeHome({ modelServerUrl: SERVER, mcpServers: { probe: { url: "http://127.0.0.1:9/mcp" } } }),
    );
    const config = JSON.parse(home.env["OPENCODE_CONFIG_CONTENT"] ?? "{}") as Record<string, unknown>;
    expect(config).toMatchObject({
      provider: { fake: { npm: "@ai-sdk/openai-compatible", options: { baseURL: `${SERVER}/v1` } } },
      model: "fake/fake-model",
      mcp: { probe: { type: "remote", url: "http://127.0.0.1:9/mcp", enabled: true } },
    });
    expect(home.configPath.startsWith(home.cwd)).toBe(false);
    expect(home.env["OPENCODE_DISABLE_MODELS_FETCH"]).toBe("1");
  });

  it("Gemini: settings.json with API-key auth and trusted HTTP MCP servers", async () => {
    const home = track(
      await createGeminiHome({ modelServerUrl: SERVER, mcpServers: { probe: { url: "http://127.0.0.1:9/mcp" } } }),
    );
    expect(home.settingsPath).toBe(join(home.home, ".gemini", "settings.json"));
    const settings = JSON.parse(await readFile(home.settingsPath, "utf8")) as Record<string, unknown>;
    expect(settings).toMatchObject({
      security: { auth: { selectedType: "gemini-api-key" } },
      mcpServers: { probe: { httpUrl: "http://127.0.0.1:9/mcp", trust: true } },
    });
    expect(home.env).toMatchObject({
      GEMINI_CLI_HOME: home.home,
      GOOGLE_GEMINI_BASE_URL: SERVER,
      GEMINI_CLI_TRUST_WORKSPACE: "true",
      GEMINI_CLI_NO_RELAUNCH: "true",
    });
    expect(home.promptArgs("hi")).toEqual(["-y", "-o", "json", "-p", "hi"]);
  });

  it("cleanup removes the whole root, idempotently", async () => {
    const home = await createCodexHome({ modelServerUrl: SERVER });
    expect(existsSync(home.configPath)).toBe(true);
    await home.cleanup();
    await home.cleanup();
    expect(existsSync(home.root)).toBe(false);
  });
});

describe("resolveHarnessBinary", () => {
  it("finds native binaries behind the npm wrappers", () => {
    const codex = resolveHarnessBinary("codex");
    expect(codex).toMatchObject({ native: true, args: [], version: "0.171.0" });
    expect(codex.command).toContain(join("@openai", `codex-${process.platform}-${process.arch}`, "vendor"));
    expect(existsSync(codex.command)).toBe(true);
  });

  it("runs JS harnesses with node directly", () => {
    const pi = resolveHarnessBinary("pi");
    expect(pi).toMatchObject({ native: false, command: process.execPath });
    // Pi 1.x ships its CLI as dist/bundle/cli.js.
    expect(pi.args[0]).toMatch(/pi-coding-agent[/\\]dist[/\\](bundle[/\\])?cli\.js$/);
    expect(resolveHarnessBinary("gemini").env).toEqual({ GEMINI_CLI_NO_RELAUNCH: "true" });
    // codex-acp 2.x is a Node package (it runs the Codex app-server it resolves).
    const acp = resolveHarnessBinary("codex-acp");
    expect(acp).toMatchObject({
      native: false,
      command: process.execPath,
      packageName: "@agentclientprotocol/codex-acp",
    });
    expect(acp.args[0]).toMatch(/codex-acp[/\\]dist[/\\]index\.js$/);
  });

  it("throws a typed error when the harness is not installed", async () => {
    const empty = await mkdtemp(join(tmpdir(), "switchyard-empty-"));
    try {
      expect(() => resolveHarnessBinary("codex", { searchFrom: empty })).toThrowError(
        expect.objectContaining({ code: "harness_binary_not_found", harness: "codex" }),
      );
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });
});

describe.runIf(process.platform === "linux")("harness processes", () => {
  const env = { PATH: process.env["PATH"] ?? "/usr/bin:/bin" };

  /** True once `pid` is gone or a zombie (dead, waiting for its new parent to reap it). */
  async function gone(pid: number): Promise<boolean> {
    for (let i = 0; i < 250; i++) {
      try {
        const stat = await readFile(`/proc/${pid}/stat`, "utf8");
        if (/^\d+ \(.*\) Z/.test(stat)) return true;
      } catch {
        return true;
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return false;
  }

  it("kill() takes down the whole process group", async () => {
    const proc = spawnHarness("sh", ["-c", "sleep 300 & echo $!; wait"], { cwd: tmpdir(), env });
    const line = await new Promise<string>((resolve) => proc.onLine(resolve));
    const grandchild = Number(line);
    expect(liveHarnessProcesses()).toContain(proc);
    const exit = await proc.kill();
    expect(exit.signal).toBe("SIGTERM");
    expect(await gone(grandchild)).toBe(true);
    expect(liveHarnessProcesses()).not.toContain(proc);
  });

  it("reaps what is left in the group when the main process exits", async () => {
    const proc = spawnHarness("sh", ["-c", "sleep 300 & echo $!"], { cwd: tmpdir(), env });
    const exit = await proc.exited;
    expect(exit.code).toBe(0);
    expect(await gone(Number(exit.stdout.trim()))).toBe(true);
  });

  it("gives stdin EOF by default and pipes it on request", async () => {
    const closed = spawnHarness("cat", [], { cwd: tmpdir(), env });
    expect((await closed.exited).code).toBe(0);
    const piped = spawnHarness("cat", [], { cwd: tmpdir(), env, stdin: "pipe" });
    const echoed = piped.waitForJsonLine<{ n: number }>((v) => v.n === 1);
    piped.writeLine({ n: 1 });
    expect(await echoed).toEqual({ n: 1 });
    piped.closeStdin();
    expect((await piped.exited).code).toBe(0);
  });
});
