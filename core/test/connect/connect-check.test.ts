import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { callTool, connectMcp } from "../support/mcp-client.js";
import { SCRIPTED_PROVIDER_PLUGIN_DIR } from "@switchyard/testkit/scripted-provider";
import { CLI } from "../support/cli.js";
import { readRow, ServeProcess, writeHomeConfig, type ServeEndpoint } from "../support/serve-process.js";
import { isolatedHarnessEnv, type ConnectJson } from "./isolated-harness-env.js";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));
/** Claude Code's binary as the Agent SDK ships it (the repo has no `claude` on PATH of its own). */
const CLAUDE_BINARY = join(REPO, "node_modules", "@anthropic-ai", "claude-agent-sdk-linux-x64", "claude");

/**
 * `connect --check` against a real `switchyard serve`: an MCP call with the connection's token,
 * and each installed harness's own `mcp list` (Codex lists the entry; OpenCode, Claude Code and
 * Gemini CLI connect to it) run with the isolated homes. No model runs.
 */
describe("switchyard connect --check against a running server and the real harnesses", () => {
  let scratch: string;
  let env: Record<string, string>;
  let cwd: string;
  let serve: ServeProcess;
  let endpoint: ServeEndpoint;
  const connected: Record<string, ConnectJson> = {};
  const cli = (args: string[]) => runCli(args, { env, cwd, timeoutMs: 180_000 });
  /** `--check` as a user runs it: in a shell that sourced env.sh (or did not), in `dir`. */
  const checkInShell = async (args: string[], options: { sourced?: boolean; dir?: string } = {}) => {
    const envSh = join(env.SWITCHYARD_HOME!, "connections", "env.sh");
    const script = options.sourced === false ? `exec "$@"` : `. "${envSh}" && exec "$@"`;
    const { NO_COLOR: _noColor, FORCE_COLOR: _forceColor, ...inherited } = process.env;
    const result = await execa("bash", ["-c", script, "bash", process.execPath, CLI, "connect", ...args], {
      env: { ...inherited, ...env },
      extendEnv: false,
      cwd: options.dir ?? cwd,
      reject: false,
      stdin: "ignore",
      timeout: 180_000,
    });
    return { code: result.exitCode ?? null, stdout: String(result.stdout), stderr: String(result.stderr) };
  };
  const tokenOf = (harness: string) =>
    /sy_[A-Za-z0-9_-]{20,}/.exec(readFileSync(connected[harness]!.secretFile, "utf8"))![0];

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), "switchyard-connect-check-"));
    const bin = join(scratch, "bin");
    mkdirSync(bin);
    if (existsSync(CLAUDE_BINARY)) symlinkSync(CLAUDE_BINARY, join(bin, "claude"));
    env = {
      ...isolatedHarnessEnv(scratch),
      PATH: [bin, join(REPO, "node_modules", ".bin"), process.env.PATH ?? ""].join(delimiter),
      // Gemini CLI turns MCP servers off in folders it does not trust.
      GEMINI_CLI_TRUST_WORKSPACE: "true",
    };
    cwd = join(scratch, "work");
    mkdirSync(cwd);
    // A provider that can run work and a project, so the check's harmless change has a place to go.
    writeHomeConfig(env.SWITCHYARD_HOME!, {
      plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR],
      providers: [{ id: "alpha", driver: "scripted", options: {} }],
    });
    expect((await cli(["project", "add", cwd])).code).toBe(0);
    serve = ServeProcess.start(env.SWITCHYARD_HOME!, ["--port", "0"], env);
    endpoint = await serve.ready;
    for (const harness of ["codex", "opencode", "claude", "gemini", "pi"]) {
      const result = await cli(["connect", harness, "--json"]);
      expect(result.code, result.stderr).toBe(0);
      connected[harness] = JSON.parse(result.stdout) as ConnectJson;
    }
  }, 300_000);
  afterAll(async () => {
    await serve?.terminate();
    rmSync(scratch, { recursive: true, force: true });
  });

  it("connect points the entry at the running server, and --check says it works, harness included", async () => {
    for (const harness of Object.keys(connected))
      expect(connected[harness]).toMatchObject({ url: endpoint.mcpUrl, serverRunning: true });
    const expectations: Record<string, RegExp> = {
      codex:
        /harness\s+ok\s+codex mcp list --json: switchyard enabled at http:\/\/127\.0\.0\.1:\d+\/mcp \(token from \$SWITCHYARD_CODEX_TOKEN, auth bearer_token\); switchyard-direct enabled/,
      opencode: /harness\s+ok\s+opencode mcp list: switchyard connected/,
      claude: /harness\s+ok\s+claude mcp list: switchyard: http:\/\/127\.0\.0\.1:\d+\/mcp \(HTTP\) - ✔ Connected/,
      gemini: /harness\s+ok\s+gemini mcp list: switchyard: http:\/\/127\.0\.0\.1:\d+\/mcp \(http\) - Connected/,
      pi: /harness\s+skipped\s+Pi has no command that lists its MCP servers/,
    };
    for (const [harness, expected] of Object.entries(expectations)) {
      if (harness === "claude" && !existsSync(CLAUDE_BINARY)) continue;
      const check = await checkInShell([harness, "--check"]);
      expect(check.code, `${harness}: ${check.stdout}${check.stderr}`).toBe(0);
      expect(check.stdout).toMatch(/mcp\s+ok\s+orchestrator_capabilities answered/);
      expect(check.stdout).toMatch(/change\s+ok\s+created and settled an idle thread in project project_/);
      expect(check.stdout).toMatch(expected);
      expect(check.stdout).toContain(`Connected: `);
      expect(check.stdout + check.stderr).not.toContain(tokenOf(harness));
    }
    const json = JSON.parse((await checkInShell(["codex", "--check", "--json"])).stdout) as {
      ok: boolean;
      steps: { name: string; status: string }[];
    };
    expect(json.ok).toBe(true);
    expect(json.steps.map((step) => [step.name, step.status])).toEqual([
      ["entry", "ok"],
      ["secret", "ok"],
      ["shell", "ok"],
      ["token", "ok"],
      ["server", "ok"],
      ["mcp", "ok"],
      ["change", "ok"],
      ["harness", "ok"],
    ]);
    // Every check lands on the same settled thread (its retry key), not a new one each time.
    const checkThreads = readRow<{ n: number; settled: number }>(
      env.SWITCHYARD_HOME!,
      "SELECT COUNT(*) AS n, SUM(json_extract(data, '$.settledAt') IS NOT NULL) AS settled FROM threads WHERE json_extract(data, '$.title') = 'switchyard connect --check'",
    )!;
    expect(checkThreads.n).toBe(Object.keys(expectations).length);
    expect(checkThreads.settled).toBe(checkThreads.n);
  }, 300_000);

  it("fails where the harness would: the token variable unset in this shell (naming it and env.sh), or no project for its work", async () => {
    const unsourced = await checkInShell(["codex", "--check"], { sourced: false });
    expect(unsourced.code).toBe(1);
    expect(unsourced.stdout).toMatch(
      /shell\s+FAILED\s+\$SWITCHYARD_CODEX_TOKEN is not set in this shell, and Codex reads the token from it: run `\. \S+\/connections\/env\.sh`/,
    );
    expect(unsourced.stdout).toContain("Not working: Codex (user)");
    // OpenCode reads its token file itself: no shell step, and it works unsourced.
    const openCode = await checkInShell(["opencode", "--check"], { sourced: false });
    expect(openCode.code, openCode.stdout).toBe(0);
    expect(openCode.stdout).not.toMatch(/^\s+shell/m);

    // A second project, and a check run from a folder in neither: where would the agent's work go?
    const second = join(scratch, "second");
    const elsewhere = join(scratch, "elsewhere");
    mkdirSync(second);
    mkdirSync(elsewhere);
    expect((await cli(["project", "add", second])).code).toBe(0);
    const lost = await checkInShell(["codex", "--check"], { dir: elsewhere });
    expect(lost.code).toBe(1);
    expect(lost.stdout).toMatch(
      /change\s+FAILED\s+create_threads \(an idle thread, as a delegation would\) was refused: invalid_request: Name the project with projectId: none of .*elsewhere is in the projects this token may use: .*second/,
    );
  }, 300_000);

  it("a revoked token fails the check, clearly, and the harness itself cannot connect either", async () => {
    const opencode = connected.opencode!;
    expect((await cli(["token", "revoke", opencode.credentialId])).code).toBe(0);
    const check = await checkInShell(["opencode", "--check"]);
    expect(check.code).toBe(1);
    expect(check.stdout).toMatch(
      new RegExp(`token\\s+FAILED\\s+${opencode.credentialId} is revoked; run \`switchyard connect opencode\` again`),
    );
    expect(check.stdout).toMatch(/mcp\s+FAILED\s+the server refused the token \(HTTP 401\)/);
    expect(check.stdout).toMatch(/harness\s+FAILED\s+opencode mcp list: switchyard failed/);
    expect(check.stdout).toContain("Not working: OpenCode (user) cannot use Switchyard");
    // connect again heals it: a new token, the old one stays revoked.
    const again = JSON.parse((await cli(["connect", "opencode", "--json"])).stdout) as ConnectJson;
    expect(again.tokenIssued).toBe(true);
    expect(again.credentialId).not.toBe(opencode.credentialId);
    expect((await checkInShell(["opencode", "--check"])).code).toBe(0);
  });

  it("after disconnect the token no longer reaches the server", async () => {
    const token = tokenOf("gemini");
    const client = await connectMcp(endpoint.mcpUrl, token);
    expect((await callTool(client, "orchestrator_capabilities", {})).ok).toBe(true);
    await client.close();
    expect((await cli(["disconnect", "gemini"])).code).toBe(0);
    await expect(connectMcp(endpoint.mcpUrl, token)).rejects.toThrow(/401|Unauthorized|invalid_token/i);
  });

  it("a real Pi loads the connect extension and reaches Switchyard with the token from its state file", async () => {
    const pi = connected.pi!;
    const lastUsed = () =>
      readRow<{ last_used_at: number }>(env.SWITCHYARD_HOME!, "SELECT last_used_at FROM mcp_credentials WHERE id = ?", [
        pi.credentialId,
      ])!.last_used_at;
    const before = lastUsed();
    // RPC mode, offline, no model: the extension registers Switchyard's tools at start-up (initialize, tools/list).
    const run = execa(join(REPO, "node_modules", ".bin", "pi"), ["--mode", "rpc", "--offline"], {
      cwd,
      env,
      extendEnv: false,
      reject: false,
      timeout: 90_000,
      stdin: "pipe",
    });
    const answered = new Promise<string>((resolve) => {
      let text = "";
      run.stdout!.on("data", (chunk: Buffer) => {
        text += chunk.toString();
        if (text.includes('"command":"get_commands"')) resolve(text);
      });
    });
    run.stdin!.write('{"type":"get_commands"}\n');
    expect(await answered).toContain('"success":true');
    run.stdin!.end();
    const result = await run;
    expect(String(result.stderr)).not.toContain("MCP tools unavailable");
    expect(lastUsed()).toBeGreaterThan(before);
  });

  it("a stopped server fails the check and says to start it; nothing logged a token", async () => {
    for (const harness of Object.keys(connected)) {
      if (harness !== "gemini") expect(serve.stderr).not.toContain(tokenOf(harness));
    }
    expect(await serve.terminate()).toBe(0);
    const check = await checkInShell(["codex", "--check"]);
    expect(check.code).toBe(1);
    expect(check.stdout).toMatch(/server\s+FAILED\s+no Switchyard server runs on .*; start it with `switchyard serve`/);
    expect(check.stdout).toMatch(/mcp\s+FAILED\s+nothing listens at http:\/\/127\.0\.0\.1:\d+\/mcp \(ECONNREFUSED\)/);
    const listing = await cli(["connections"]);
    expect(listing.stdout).toMatch(/codex\s+user\s+\S+config\.toml\s+ok\s+active \(cred_[0-9a-f]+\)\s+not running/);
  });
});
