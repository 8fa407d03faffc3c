import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse as parseToml } from "smol-toml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { isolatedHarnessEnv, type ConnectJson } from "./isolated-harness-env.js";

/** chattr +i / -i on a folder; false where the file system or the machine cannot (then that case is not run). */
function setImmutable(dir: string, on: boolean): boolean {
  try {
    execFileSync("chattr", [on ? "+i" : "-i", dir], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

const HARNESSES = ["claude", "codex", "cursor", "opencode", "gemini", "pi"] as const;

/** Parses a written config the way its harness reads it. */
function parseConfig(file: string): unknown {
  const text = readFileSync(file, "utf8");
  if (file.endsWith(".toml")) return parseToml(text);
  if (file.endsWith(".js")) return text;
  return JSON.parse(text);
}

/** The entry a harness's parsed config holds under the server key. */
function entryOf(harness: string, config: unknown, key = "switchyard"): unknown {
  const c = config as Record<string, Record<string, unknown>>;
  if (harness === "codex") return c.mcp_servers?.[key];
  if (harness === "opencode") return c.mcp?.[key];
  if (harness === "pi") return config;
  return c.mcpServers?.[key];
}

describe("switchyard connect / disconnect / connections (real CLI, isolated homes)", () => {
  let scratch: string;
  let env: Record<string, string>;
  let project: string;
  const cli = (args: string[], cwd?: string) => runCli(args, { env, ...(cwd ? { cwd } : {}) });
  const connect = async (args: string[], cwd?: string) => {
    const result = await cli(["connect", ...args, "--json"], cwd);
    expect(result.code, result.stderr).toBe(0);
    return JSON.parse(result.stdout) as ConnectJson;
  };
  const tokens = async () =>
    JSON.parse((await cli(["token", "list", "--all", "--json"])).stdout) as {
      id: string;
      label: string;
      status: string;
      verbs: string[];
      ceiling: unknown;
    }[];

  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), "switchyard-connect-"));
    env = isolatedHarnessEnv(scratch);
    project = join(scratch, "repo");
    mkdirSync(project);
  });
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it("writes each harness's entry in its own format and place; the token is only in a file readable by the user alone", async () => {
    for (const harness of HARNESSES) {
      const out = await connect([harness]);
      expect(out).toMatchObject({
        harness,
        scope: "user",
        configChanged: true,
        tokenIssued: true,
        serverRunning: false,
        url: "http://127.0.0.1:7410/mcp",
      });
      expect(out.configFile.startsWith(env.HOME!)).toBe(true);
      const token = readFileSync(out.secretFile, "utf8");
      expect(statSync(out.secretFile).mode & 0o777).toBe(0o600);
      expect(statSync(join(env.SWITCHYARD_HOME!, "connections")).mode & 0o777).toBe(0o700);
      const raw = /sy_[A-Za-z0-9_-]{20,}/.exec(token)![0];
      expect(readFileSync(out.configFile, "utf8")).not.toContain(raw);
      expect(entryOf(harness, parseConfig(out.configFile)), harness).toBeDefined();
    }
    const listedConnections = JSON.parse((await cli(["connections", "--json"])).stdout) as (ConnectJson & {
      token: string;
      entry: string;
    })[];
    const byHarness = Object.fromEntries(
      HARNESSES.map((harness) => [harness, listedConnections.find((row) => row.harness === harness)!] as const),
    );
    expect(Object.values(byHarness).map((row) => [row.token, row.entry])).toEqual(
      HARNESSES.map(() => ["active", "as-written"]),
    );
    expect(byHarness.codex!.configFile).toBe(join(env.CODEX_HOME!, "config.toml"));
    expect(byHarness.claude!.configFile).toBe(join(env.CLAUDE_CONFIG_DIR!, ".claude.json"));
    expect(byHarness.cursor!.configFile).toBe(join(env.HOME!, ".cursor", "mcp.json"));
    expect(byHarness.opencode!.configFile).toBe(join(env.XDG_CONFIG_HOME!, "opencode", "opencode.json"));
    expect(byHarness.gemini!.configFile).toBe(join(env.GEMINI_CLI_HOME!, ".gemini", "settings.json"));
    expect(byHarness.pi!.configFile).toBe(join(env.PI_CODING_AGENT_DIR!, "extensions", "switchyard", "index.js"));

    const codex = entryOf("codex", parseConfig(byHarness.codex!.configFile)) as Record<string, unknown>;
    // Headless use: each harness runs the tools without asking (the token bounds what they do).
    expect(codex).toMatchObject({
      url: "http://127.0.0.1:7410/mcp",
      bearer_token_env_var: "SWITCHYARD_CODEX_TOKEN",
      disabled_tools: ["t3_thread_wait"],
      default_tools_approval_mode: "approve",
    });
    expect(entryOf("codex", parseConfig(byHarness.codex!.configFile), "switchyard-direct")).toMatchObject({
      default_tools_approval_mode: "approve",
    });
    expect(parseConfig(join(env.CLAUDE_CONFIG_DIR!, "settings.json"))).toEqual({
      permissions: { allow: ["mcp__switchyard"] },
    });
    expect(entryOf("gemini", parseConfig(byHarness.gemini!.configFile))).toMatchObject({ trust: true });
    expect(entryOf("opencode", parseConfig(byHarness.opencode!.configFile))).toMatchObject({
      oauth: false,
      timeout: expect.any(Number),
    });
    expect(codex.tool_timeout_sec as number).toBeGreaterThan(50 * 2);
    expect(entryOf("codex", parseConfig(byHarness.codex!.configFile), "switchyard-direct")).toMatchObject({
      enabled_tools: ["t3_thread_wait"],
    });
    expect(entryOf("claude", parseConfig(byHarness.claude!.configFile))).toMatchObject({
      type: "http",
      headersHelper: `cat '${byHarness.claude!.secretFile}'`,
    });
    expect(entryOf("gemini", parseConfig(byHarness.gemini!.configFile))).toMatchObject({
      httpUrl: "http://127.0.0.1:7410/mcp",
      headers: { Authorization: "Bearer ${SWITCHYARD_GEMINI_TOKEN}" },
    });
    expect(entryOf("cursor", parseConfig(byHarness.cursor!.configFile))).toMatchObject({
      headers: { Authorization: "Bearer ${env:SWITCHYARD_CURSOR_TOKEN}" },
    });
    expect(entryOf("opencode", parseConfig(byHarness.opencode!.configFile))).toMatchObject({
      type: "remote",
      headers: { Authorization: `Bearer {file:${byHarness.opencode!.secretFile}}` },
    });

    // env.sh reads the token files; it holds none itself.
    const envScript = readFileSync(join(env.SWITCHYARD_HOME!, "connections", "env.sh"), "utf8");
    expect(envScript).toContain(`export SWITCHYARD_CODEX_TOKEN="$(cat '${byHarness.codex!.secretFile}')"`);
    expect(envScript).not.toMatch(/sy_[A-Za-z0-9_-]{20,}/);

    const listed = await tokens();
    expect(listed.filter((t) => t.label?.startsWith("connect "))).toHaveLength(HARNESSES.length);
    expect(listed.find((t) => t.label === "connect codex (user)")).toMatchObject({
      status: "active",
      verbs: ["read", "operate"],
      ceiling: { runtimeMode: "approval-required", interactionMode: "default" },
    });
  });

  it("a second run changes nothing: the same bytes, the same token, no new one issued", async () => {
    const before = await tokens();
    const rows = JSON.parse((await cli(["connections", "--json"])).stdout) as ConnectJson[];
    for (const harness of HARNESSES) {
      const file = rows.find((row) => row.harness === harness)!.configFile;
      const text = readFileSync(file, "utf8");
      const again = await connect([harness]);
      expect(again, harness).toMatchObject({ configChanged: false, tokenIssued: false, replacedCredentialId: null });
      expect(readFileSync(file, "utf8")).toBe(text);
    }
    expect(await tokens()).toEqual(before);
    const human = await cli(["connect", "codex"]);
    expect(human.stdout).toContain("is already connected; nothing changed.");
  });

  it("edits a project's existing configs in place: the user's servers and comments stay, a backup is kept", async () => {
    const mcpJson = `{\n  "mcpServers": {\n    "github": {\n      "type": "http",\n      "url": "https://example.invalid/mcp"\n    }\n  }\n}\n`;
    writeFileSync(join(project, ".mcp.json"), mcpJson);
    mkdirSync(join(project, ".codex"));
    const codexToml = `# project settings\n[mcp_servers.docs]\ncommand = "docs-mcp" # stdio\n`;
    writeFileSync(join(project, ".codex", "config.toml"), codexToml);
    writeFileSync(
      join(project, "opencode.jsonc"),
      `{\n  // project OpenCode\n  "mcp": { "docs": { "type": "local", "command": ["docs-mcp"] } },\n}\n`,
    );

    mkdirSync(join(project, ".claude"));
    writeFileSync(
      join(project, ".claude", "settings.local.json"),
      `{
  // mine
  "permissions": { "allow": ["Bash(npm test)"] }
}
`,
    );
    const claude = await connect(["claude", "--project", project]);
    expect(claude.configFile).toBe(join(project, ".mcp.json"));
    // The person's own rule stays; the tools' rule joins it in the project's local settings.
    expect(readFileSync(join(project, ".claude", "settings.local.json"), "utf8")).toContain("// mine");
    expect(readFileSync(join(project, ".claude", "settings.local.json"), "utf8")).toMatch(
      /"allow": \[\s*"Bash\(npm test\)",\s*"mcp__switchyard"\s*\]/,
    );
    expect(Object.keys((parseConfig(claude.configFile) as { mcpServers: object }).mcpServers)).toEqual([
      "github",
      "switchyard",
    ]);
    expect(readFileSync(`${claude.configFile}.switchyard-backup`, "utf8")).toBe(mcpJson);

    const codex = await connect(["codex", "--scope", "project"], project);
    expect(codex.configFile).toBe(join(project, ".codex", "config.toml"));
    expect(codex.envVar).toMatch(/^SWITCHYARD_CODEX_TOKEN_[0-9A-F]{8}$/);
    const codexText = readFileSync(codex.configFile, "utf8");
    expect(codexText.startsWith(codexToml)).toBe(true);
    expect(Object.keys((parseToml(codexText) as { mcp_servers: object }).mcp_servers).sort()).toEqual([
      "docs",
      "switchyard",
      "switchyard-direct",
    ]);

    const opencode = await connect(["opencode", "--project", project]);
    expect(opencode.configFile).toBe(join(project, "opencode.jsonc"));
    expect(readFileSync(opencode.configFile, "utf8")).toContain("// project OpenCode");

    // The user-scope connections are separate ones with their own tokens.
    const rows = JSON.parse((await cli(["connections", "--json"])).stdout) as ConnectJson[];
    expect(
      rows
        .filter((row) => row.harness === "codex")
        .map((row) => row.scope)
        .sort(),
    ).toEqual(["project", "user"]);
  });

  it("new token options issue a new token and revoke the one it replaces", async () => {
    const before = (JSON.parse((await cli(["connections", "--json"])).stdout) as ConnectJson[]).find(
      (row) => row.harness === "gemini" && row.scope === "user",
    )!;
    const changed = await connect(["gemini", "--verbs", "read", "--max-runtime-mode", "full-access"]);
    expect(changed).toMatchObject({
      tokenIssued: true,
      replacedCredentialId: before.credentialId,
      configChanged: false,
    });
    const listed = await tokens();
    expect(listed.find((t) => t.id === before.credentialId)?.status).toBe("revoked");
    expect(listed.find((t) => t.id === changed.credentialId)).toMatchObject({
      status: "active",
      verbs: ["read"],
      ceiling: { runtimeMode: "full-access" },
    });
  });

  it("refuses bad input with exit 2 and a message naming what was wrong, leaving files and tokens as they were", async () => {
    const before = await tokens();
    const unknown = await cli(["connect", "vim"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(
      '"vim" is not a harness switchyard connect knows; use one of claude, codex, cursor, opencode, gemini, pi.',
    );

    const broken = join(scratch, "broken");
    mkdirSync(join(broken, ".gemini"), { recursive: true });
    const malformed = '{\n  "mcpServers": {\n    "a": { "httpUrl": "x" }\n  \n';
    writeFileSync(join(broken, ".gemini", "settings.json"), malformed);
    const refused = await cli(["connect", "gemini", "--project", broken]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`${join(broken, ".gemini", "settings.json")} is not valid`);
    expect(refused.stderr).toContain("Nothing was changed");
    expect(readFileSync(join(broken, ".gemini", "settings.json"), "utf8")).toBe(malformed);
    expect(existsSync(join(broken, ".gemini", "settings.json.switchyard-backup"))).toBe(false);

    const badToml = join(scratch, "bad-toml");
    mkdirSync(join(badToml, ".codex"), { recursive: true });
    writeFileSync(join(badToml, ".codex", "config.toml"), "[mcp_servers.switchyard\nurl = 1\n");
    const tomlRefused = await cli(["connect", "codex", "--project", badToml]);
    expect(tomlRefused.code).toBe(2);
    expect(tomlRefused.stderr).toContain("config.toml is not valid");

    // A folder that cannot be made: the place where .cursor should go is a file.
    const blocked = join(scratch, "blocked");
    mkdirSync(blocked);
    writeFileSync(join(blocked, ".cursor"), "not a folder");
    const unwritable = await cli(["connect", "cursor", "--project", blocked]);
    expect(unwritable.code).toBe(2);
    expect(unwritable.stderr).toContain(`Cannot read ${join(blocked, ".cursor", "mcp.json")} (ENOTDIR)`);
    // A folder that takes no new files, even for root (immutable): the token issued for it is revoked again.
    const immutable = join(scratch, "immutable");
    mkdirSync(join(immutable, ".cursor"), { recursive: true });
    if (setImmutable(join(immutable, ".cursor"), true)) {
      try {
        const refusedWrite = await cli(["connect", "cursor", "--project", immutable]);
        expect(refusedWrite.code).toBe(2);
        expect(refusedWrite.stderr).toContain(`Cannot write ${join(immutable, ".cursor", "mcp.json")} (EPERM)`);
      } finally {
        setImmutable(join(immutable, ".cursor"), false);
      }
    }
    const records = JSON.parse((await cli(["connections", "--json"])).stdout) as ConnectJson[];
    expect(records.some((row) => row.configFile.startsWith(immutable))).toBe(false);
    expect(
      readdirSync(join(env.SWITCHYARD_HOME!, "connections")).filter((name) => name.startsWith("cursor-")),
    ).toHaveLength(1);

    const badScope = await cli(["connect", "claude", "--scope", "global"]);
    expect(badScope.code).toBe(2);
    expect(badScope.stderr).toContain('"global" is not a scope');

    // Nothing above left a token active (the one for the immutable folder was revoked again at once).
    const after = await tokens();
    expect(
      after
        .filter((t) => t.status === "active")
        .map((t) => t.id)
        .sort(),
    ).toEqual(
      before
        .filter((t) => t.status === "active")
        .map((t) => t.id)
        .sort(),
    );
    expect(existsSync(join(blocked, ".cursor.switchyard-backup"))).toBe(false);
  });

  it("disconnect removes only its entry and revokes the token; a second disconnect says it is not connected", async () => {
    const claude = (JSON.parse((await cli(["connections", "--json"])).stdout) as ConnectJson[]).find(
      (row) => row.harness === "claude" && row.scope === "project",
    )!;
    const result = await cli(["disconnect", "claude", "--project", project]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`removed "switchyard" from ${claude.configFile}`);
    expect(Object.keys((parseConfig(claude.configFile) as { mcpServers: object }).mcpServers)).toEqual(["github"]);
    // Its approval rule goes with it; the person's own rules stay.
    const rules = readFileSync(join(project, ".claude", "settings.local.json"), "utf8");
    expect(rules).toContain('"Bash(npm test)"');
    expect(rules).not.toContain("mcp__switchyard");
    expect(existsSync(claude.secretFile)).toBe(false);
    expect((await tokens()).find((t) => t.id === claude.credentialId)?.status).toBe("revoked");
    const again = await cli(["disconnect", "claude", "--project", project]);
    expect(again.code).toBe(3);
    expect(again.stderr).toContain("Claude Code is not connected at");

    const pi = (JSON.parse((await cli(["connections", "--json"])).stdout) as ConnectJson[]).find(
      (row) => row.harness === "pi",
    )!;
    expect((await cli(["disconnect", "pi"])).code).toBe(0);
    expect(existsSync(pi.configFile)).toBe(false);

    const codexUser = (JSON.parse((await cli(["connections", "--json"])).stdout) as ConnectJson[]).find(
      (row) => row.harness === "codex" && row.scope === "user",
    )!;
    expect((await cli(["disconnect", "codex"])).code).toBe(0);
    // connect made that config.toml for the entry alone, so nothing is left of it.
    expect(existsSync(codexUser.configFile)).toBe(false);
    expect(readFileSync(join(env.SWITCHYARD_HOME!, "connections", "env.sh"), "utf8")).not.toContain(
      codexUser.secretFile,
    );
  });

  it("--check on a harness that is not connected there exits 3", async () => {
    const result = await cli(["connect", "cursor", "--check", "--project", project]);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain("Cursor is not connected at");
  });
});
