import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPiHome, ScriptedModelServer, type PiHome } from "@switchyard/testkit";
import { runCli } from "../support/cli.js";
import { connectMcp, mustCall } from "../support/mcp-client.js";
import { ServeProcess, writeHomeConfig, type ServeEndpoint } from "../support/serve-process.js";
import { isolatedHarnessEnv } from "./isolated-harness-env.js";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const PI_PLUGIN = join(REPO, "plugins", "pi");
/** Claude Code's binary as the Agent SDK ships it (the repo has no `claude` on PATH of its own). */
const CLAUDE_BINARY = join(REPO, "node_modules", "@anthropic-ai", "claude-agent-sdk-linux-x64", "claude");
const CHROMIUM = process.env.SWITCHYARD_CHROMIUM ?? "/usr/bin/chromium";
const DUMMY_KEY = "sk-switchyard-testkit-dummy";

interface Shell {
  threadId: string;
  title: string;
  relationship: string;
  parentThreadId: string | null;
  delegatedTaskId: string | null;
  providerInstanceId: string;
  creationSource: string;
  attached?: { client: { name: string; version: string } | null };
}

/**
 * The "done when": the user's own harnesses, run as a user runs them (the entry
 * `switchyard connect` wrote, the token from env.sh sourced in the shell, a fresh HOME), each
 * pointed at the scripted model server, delegate to a Pi instance of a real `switchyard serve`
 * with `delegate_task` in wait mode, get the child's answer in the same turn, and the child shows
 * under the session's attached thread in t3_thread_list, the HTTP API and the web UI's Agents
 * panel, with its usage.
 */
describe("your own harness delegates through switchyard connect (real Codex, Claude Code, OpenCode; Pi child; scripted model)", () => {
  let scratch: string;
  let work: string;
  let env: Record<string, string>;
  let model: ScriptedModelServer;
  let piHome: PiHome;
  let serve: ServeProcess;
  let endpoint: ServeEndpoint;
  let projectId: string;
  let observer: string;

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), "switchyard-connected-harness-"));
    work = join(scratch, "work");
    mkdirSync(work);
    const bin = join(scratch, "bin");
    mkdirSync(bin);
    if (existsSync(CLAUDE_BINARY)) symlinkSync(CLAUDE_BINARY, join(bin, "claude"));
    model = await ScriptedModelServer.start();
    piHome = await createPiHome({ modelServerUrl: model.url });
    env = {
      ...isolatedHarnessEnv(scratch),
      PATH: [bin, join(REPO, "node_modules", ".bin"), process.env.PATH ?? ""].join(delimiter),
      // The user's own model settings, each harness's usual way (here: the scripted server).
      SWITCHYARD_FAKE_API_KEY: DUMMY_KEY,
      ANTHROPIC_BASE_URL: model.url,
      ANTHROPIC_API_KEY: DUMMY_KEY,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_AUTOUPDATER: "1",
      OPENCODE_DISABLE_MODELS_FETCH: "1",
      OPENCODE_DISABLE_AUTOUPDATE: "1",
    };
    // The user's configs as they were before `connect` (connect edits them in place).
    mkdirSync(env.CODEX_HOME!, { recursive: true });
    writeFileSync(
      join(env.CODEX_HOME!, "config.toml"),
      [
        'model = "fake-model"',
        'model_provider = "fake"',
        "",
        "[model_providers.fake]",
        'name = "fake"',
        `base_url = "${model.url}/v1"`,
        'env_key = "SWITCHYARD_FAKE_API_KEY"',
        'wire_api = "responses"',
        "request_max_retries = 0",
        "",
      ].join("\n"),
    );
    mkdirSync(join(env.XDG_CONFIG_HOME!, "opencode"), { recursive: true });
    writeFileSync(
      join(env.XDG_CONFIG_HOME!, "opencode", "opencode.json"),
      JSON.stringify(
        {
          provider: {
            fake: {
              npm: "@ai-sdk/openai-compatible",
              name: "Fake",
              options: { baseURL: `${model.url}/v1`, apiKey: DUMMY_KEY },
              models: { "fake-model": { name: "Fake Model", tool_call: true } },
            },
          },
          model: "fake/fake-model",
          small_model: "fake/fake-model",
          autoupdate: false,
          share: "disabled",
        },
        null,
        2,
      ),
    );

    const home = env.SWITCHYARD_HOME!;
    writeHomeConfig(home, {
      plugins: [PI_PLUGIN],
      providers: [{ id: "pi", driver: "pi", homePath: piHome.home, environment: piHome.env }],
    });
    projectId = (
      JSON.parse((await runCli(["project", "add", work, "--json"], { env, cwd: work })).stdout) as { id: string }
    ).id;
    // The server's Pi instance has its own home (piHome); the user's Pi folder is not its.
    const { PI_CODING_AGENT_DIR: _userPi, ...serverEnv } = env;
    serve = ServeProcess.start(home, ["--port", "0"], serverEnv);
    endpoint = await serve.ready;
    for (const harness of ["codex", "claude", "opencode"]) {
      const connected = await runCli(["connect", harness, "--json"], { env, cwd: work, timeoutMs: 120_000 });
      expect(connected.code, connected.stderr).toBe(0);
    }
    observer = (
      JSON.parse((await runCli(["token", "issue", "--verbs", "read", "--json"], { env, cwd: work })).stdout) as {
        token: string;
      }
    ).token;
  }, 300_000);

  afterAll(async () => {
    await serve?.terminate();
    await piHome?.cleanup();
    await model?.close();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }, 60_000);

  /** Runs a harness command the way a user does: in their shell, with env.sh sourced (the token is never in argv). */
  async function asUser(command: readonly string[]): Promise<string> {
    const envSh = join(env.SWITCHYARD_HOME!, "connections", "env.sh");
    const result = await execa("bash", ["-c", `. "${envSh}" && exec "$@"`, "bash", ...command], {
      cwd: work,
      env,
      extendEnv: false,
      stdin: "ignore",
      reject: false,
      timeout: 240_000,
    });
    const output = `${String(result.stdout)}\n${String(result.stderr)}`;
    expect(result.exitCode, output.slice(-4_000)).toBe(0);
    return output;
  }

  /** A delegate_task call in wait mode to Pi, then the harness's answer relaying the child's. */
  function delegatingPrompt(key: string): { prompt: string; answer: string } {
    const answer = `Pi answers the ${key} session`;
    const task = {
      task: `answer the parent @@reply ${answer}`,
      target: { providerInstanceId: "pi", model: piHome.model },
      mode: "wait",
      clientRequestId: key,
      title: `${key} child`,
    };
    return {
      prompt: `delegate it @@tool delegate_task ${JSON.stringify(task)} @@then @@reply relayed: {{output.summary}}`,
      answer,
    };
  }

  /** The session's attached thread and its child, as t3_thread_list shows them. */
  async function listedFamily(clientName: string, childTitle: string): Promise<{ parent: Shell; child: Shell }> {
    const client = await connectMcp(endpoint.mcpUrl, observer);
    try {
      const listed = await mustCall<{ threads: Shell[] }>(client, "t3_thread_list", {
        projectId,
        includeSubagents: true,
        limit: 100,
      });
      const child = listed.threads.find((thread) => thread.title === childTitle);
      expect(child, JSON.stringify(listed.threads.map((thread) => thread.title))).toBeDefined();
      const parent = listed.threads.find((thread) => thread.threadId === child!.parentThreadId);
      expect(parent).toMatchObject({
        relationship: "attached",
        creationSource: "attached",
        providerInstanceId: `attached:${clientName}`,
        attached: { client: { name: clientName } },
      });
      expect(child).toMatchObject({ relationship: "subagent", providerInstanceId: "pi" });
      return { parent: parent!, child: child! };
    } finally {
      await client.close();
    }
  }

  it("codex exec delegates to Pi and relays the answer in the same turn", async () => {
    const { prompt, answer } = delegatingPrompt("codex");
    const output = await asUser(["codex", "exec", "--skip-git-repo-check", "--json", prompt]);
    expect(output).toContain(`relayed: ${answer}`);
    await listedFamily("codex-mcp-client", "codex child");
  }, 300_000);

  it("claude -p delegates to Pi and relays the answer in the same turn", async () => {
    const { prompt, answer } = delegatingPrompt("claude");
    const output = await asUser([
      "claude",
      "-p",
      prompt,
      "--model",
      "claude-fake",
      "--output-format",
      "stream-json",
      "--verbose",
    ]);
    expect(output).toContain(`relayed: ${answer}`);
    await listedFamily("claude-code", "claude child");
  }, 300_000);

  it("opencode run delegates to Pi and relays the answer in the same turn", async () => {
    const { prompt, answer } = delegatingPrompt("opencode");
    const output = await asUser(["opencode", "run", "--format", "json", prompt]);
    expect(output).toContain(`relayed: ${answer}`);
    await listedFamily("opencode", "opencode child");
  }, 300_000);

  it("the HTTP API and the web UI's Agents panel show each child under its attached thread, with usage", async () => {
    const { parent, child } = await listedFamily("codex-mcp-client", "codex child");
    const api = async <T>(path: string): Promise<T> => {
      const response = await fetch(`${endpoint.url}/api/v1${path}`, {
        headers: { authorization: `Bearer ${observer}` },
      });
      expect(response.status, path).toBe(200);
      return (await response.json()) as T;
    };
    const threads = await api<{ threads: Shell[] }>(`/threads?projectId=${projectId}&includeSubagents=true&limit=100`);
    expect(threads.threads.find((thread) => thread.threadId === parent.threadId)).toMatchObject({
      relationship: "attached",
    });
    expect(threads.threads.find((thread) => thread.threadId === child.threadId)).toMatchObject({
      parentThreadId: parent.threadId,
    });
    const task = await api<{ status: string; usage: { subtree: { turns: { ended: number } } } }>(
      `/tasks/${encodeURIComponent(child.delegatedTaskId!)}`,
    );
    expect(task.status).toBe("completed");
    expect(task.usage.subtree.turns.ended).toBeGreaterThanOrEqual(1);

    if (!existsSync(CHROMIUM)) {
      if (process.env.SWITCHYARD_REQUIRE_BROWSER === "1") throw new Error(`no Chromium at ${CHROMIUM}`);
      return;
    }
    const ui = await runCli(["ui", "--url", endpoint.url, "--json"], { env, cwd: work });
    expect(ui.code, ui.stderr).toBe(0);
    let browser: Browser | undefined;
    try {
      browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox"] });
      const page = await (await browser.newContext({ viewport: { width: 1400, height: 860 } })).newPage();
      await page.goto((JSON.parse(ui.stdout) as { link: string }).link);
      await page.locator(`.sidebar a[data-thread-id="${parent.threadId}"]`).click({ timeout: 20_000 });
      await page.locator("[data-attached]").waitFor({ timeout: 20_000 });
      const row = page.locator(`.agents-panel [data-child-thread-id="${child.threadId}"]`);
      await row.locator(".last-reply").filter({ hasText: "Pi answers the codex session" }).waitFor({ timeout: 20_000 });
      expect(await row.locator(".agent-facts").textContent()).toMatch(/Providerpi.*Usage\d[\d,]* tokens/);
    } finally {
      await browser?.close();
    }
  }, 120_000);

  it("never wrote a token into argv, a config file or the server's log", () => {
    for (const file of [
      join(env.CODEX_HOME!, "config.toml"),
      join(env.XDG_CONFIG_HOME!, "opencode", "opencode.json"),
      join(env.CLAUDE_CONFIG_DIR!, ".claude.json"),
    ]) {
      expect(readFileSync(file, "utf8")).not.toMatch(/sy_[A-Za-z0-9_-]{20,}/);
    }
    expect(serve.stderr).not.toMatch(/sy_[A-Za-z0-9_-]{20,}/);
  });
});
