import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCRIPTED_PROVIDER_PLUGIN_DIR } from "@switchyard/testkit/scripted-provider";
import { CLI, runCli } from "../support/cli.js";

const ANSI = /\u001b\[[0-9;]*m/g;

describe("switchyard CLI output and exit codes", () => {
  let home: string;
  beforeAll(() => {
    home = mkdtempSync(join(tmpdir(), "switchyard-cli-output-"));
    writeFileSync(
      join(home, "config.json"),
      JSON.stringify({
        plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR],
        providers: [
          { id: "scripted", driver: "scripted" },
          { id: "down-with-a-long-id", driver: "scripted", options: { status: { installed: false } } },
        ],
      }),
    );
  });
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  it("aligns table columns the same with and without colors (escape codes take no width)", async () => {
    const colored = await runCli(["providers", "--home", home], { env: { FORCE_COLOR: "1" } });
    const plain = await runCli(["providers", "--home", home], { env: { NO_COLOR: "1" } });
    expect(colored.code, colored.stderr).toBe(0);
    expect(colored.stdout).toMatch(ANSI);
    expect(plain.stdout).not.toMatch(ANSI);
    expect(colored.stdout.replace(ANSI, "")).toBe(plain.stdout);
    // And the plain table is aligned: every row starts its AVAILABLE cell where the header does.
    const lines = plain.stdout.split("\n");
    const column = lines[0]!.indexOf("AVAILABLE");
    for (const row of lines.slice(1)) expect(row.slice(column)).toMatch(/^(yes|no)\s/);
  });

  it("ends quietly with exit code 0 when its reader closes the pipe (| head)", async () => {
    const child = spawn(process.execPath, [CLI, "providers", "--home", home], { stdio: ["ignore", "pipe", "pipe"] });
    // The reader goes away before the command writes anything, as `head -1` does after one line.
    child.stdout!.destroy();
    let stderr = "";
    child.stderr!.on("data", (chunk) => (stderr += String(chunk)));
    const code = await new Promise((resolve) => child.on("exit", resolve));
    expect(stderr).toBe("");
    expect(code).toBe(0);
  });

  it("refuses a home that is a file with exit code 2, naming where it came from", async () => {
    const file = join(home, "not-a-folder");
    writeFileSync(file, "");
    const fromEnv = await runCli(["token", "list"], { env: { SWITCHYARD_HOME: file } });
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.stderr).toBe(
      `error: $SWITCHYARD_HOME (${file}) is not a folder. Point it at a folder; a missing one is created.`,
    );
    const fromOption = await runCli(["serve", "--port", "0", "--home", file]);
    expect(fromOption.code).toBe(2);
    expect(fromOption.stderr).toContain(`--home (${file}) is not a folder`);
    const under = await runCli(["project", "list", "--home", join(file, "inside")]);
    expect(under.code).toBe(2);
    expect(under.stderr).toContain("is not a folder");
  });

  it("exits 3 for every command that names something that does not exist", async () => {
    const token = await runCli(["token", "revoke", "cred_nope", "--home", home]);
    expect([token.code, token.stderr]).toEqual([
      3,
      "error: No client token has id cred_nope. Run `switchyard token list` to see them.",
    ]);
    const project = await runCli(["project", "remove", "project_nope", "--home", home]);
    expect(project.code).toBe(3);
    expect(project.stderr).toContain("No project has the id or folder project_nope");
    const plugin = await runCli(["plugin", "remove", "switchyard-plugin-nope", "--home", home]);
    expect(plugin.code).toBe(3);
    expect(plugin.stderr).toContain("Plugin switchyard-plugin-nope is not installed");
  });

  it("takes --ttl only with a unit, up to 365d, and weeks too", async () => {
    const bare = await runCli(["token", "issue", "--ttl", "30", "--home", home]);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('"30" has no unit; write it with one: 30s, 15m, 12h, 30d or 1w.');
    const huge = await runCli(["token", "issue", "--ttl", "99999d", "--home", home]);
    expect(huge.code).toBe(2);
    expect(huge.stderr).toContain("longer than the limit of 365d");
    const junk = await runCli(["token", "issue", "--ttl", "soon", "--home", home]);
    expect(junk.code).toBe(2);
    expect(junk.stderr).toContain('"soon" is not a duration');

    const before = Date.now();
    const week = await runCli(["token", "issue", "--ttl", "1w", "--json", "--home", home]);
    const after = Date.now();
    expect(week.code, week.stderr).toBe(0);
    const expiresAt = Date.parse((JSON.parse(week.stdout) as { expiresAt: string }).expiresAt);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 7 * 86_400_000 - 1000);
    expect(expiresAt).toBeLessThanOrEqual(after + 7 * 86_400_000 + 1000);
    const year = await runCli(["token", "issue", "--ttl", "365d", "--json", "--home", home]);
    expect(year.code, year.stderr).toBe(0);
  });

  it("lists tokens with the verbs, projects and ceiling token issue takes, and marks revoked ones", async () => {
    const tokensHome = mkdtempSync(join(tmpdir(), "switchyard-cli-tokens-"));
    try {
      const read = JSON.parse(
        (
          await runCli([
            "token",
            "issue",
            "--scope",
            "orchestration:read",
            "--label",
            "reader",
            "--json",
            "--home",
            tokensHome,
          ])
        ).stdout,
      ) as { id: string; scope: string };
      const operate = JSON.parse(
        (await runCli(["token", "issue", "--label", "operator", "--json", "--home", tokensHome])).stdout,
      ) as { id: string; scope: string };
      expect([read.scope, operate.scope]).toEqual(["orchestration:read", "orchestration:operate"]);
      expect((await runCli(["token", "revoke", read.id, "--home", tokensHome])).code).toBe(0);
      const again = await runCli(["token", "revoke", read.id, "--home", tokensHome]);
      expect(again.code).toBe(0);
      expect(again.stdout).toContain(`${read.id} was already revoked`);

      // A revoked token is listed only with --all.
      const active = JSON.parse((await runCli(["token", "list", "--json", "--home", tokensHome])).stdout) as {
        id: string;
      }[];
      expect(active.map((t) => t.id)).toEqual([operate.id]);
      const shortTable = await runCli(["token", "list", "--home", tokensHome]);
      expect(shortTable.stdout).not.toContain("reader");
      expect(shortTable.stderr).toContain("(1 revoked or ephemeral not shown: --all shows them)");
      const listed = JSON.parse((await runCli(["token", "list", "--all", "--json", "--home", tokensHome])).stdout) as {
        id: string;
        scope: string;
        status: string;
      }[];
      expect(listed.find((t) => t.id === read.id)).toMatchObject({ scope: "orchestration:read", status: "revoked" });
      expect(listed.find((t) => t.id === operate.id)).toMatchObject({
        scope: "orchestration:operate",
        status: "active",
      });
      const table = (await runCli(["token", "list", "--all", "--home", tokensHome])).stdout.split("\n");
      expect(table[0]).toMatch(/^ID\s+LABEL\s+VERBS\s+PROJECTS\s+CEILING\s+STATUS\s+EXPIRES\s+REVOKED$/);
      expect(table.find((line) => line.includes("reader"))).toMatch(
        /\sread\s+\*\s+approval-required\/default\s+revoked\s/,
      );
      expect(table.find((line) => line.includes("operator"))).toMatch(
        /\sread,operate\s+\*\s+approval-required\/default\s+active\s/,
      );
    } finally {
      rmSync(tokensHome, { recursive: true, force: true });
    }
  });

  it("says why a value the command checks itself is refused: audit --since", async () => {
    const auditHome = mkdtempSync(join(tmpdir(), "switchyard-cli-audit-"));
    try {
      const bogus = await runCli(["audit", "--since", "bogus", "--home", auditHome]);
      expect(bogus.code).toBe(2);
      expect(bogus.stderr).toContain(
        'error: --since takes a duration back from now or an ISO 8601 instant (2026-12-01T09:00:00Z): "bogus" is not a duration',
      );
      const instant = await runCli(["audit", "--since", "2026-13-45T00:00:00Z", "--home", auditHome]);
      expect(instant.code).toBe(2);
      expect(instant.stderr).toContain('--since: "2026-13-45T00:00:00Z" is not an ISO 8601 instant');
    } finally {
      rmSync(auditHome, { recursive: true, force: true });
    }
  });

  it("gives the line and column of a JSON syntax error in config.json", async () => {
    const badHome = mkdtempSync(join(tmpdir(), "switchyard-cli-badjson-"));
    try {
      const file = join(badHome, "config.json");
      writeFileSync(file, '{\n  "providers": [\n    { "id": "x", "driver": "scripted", "enabled": yes }\n  ]\n}\n');
      const unquoted = await runCli(["providers", "--home", badHome]);
      expect(unquoted.code).toBe(2);
      expect(unquoted.stderr).toContain(
        `Invalid config file ${file}:\n  line 3, column 51: not valid JSON: unexpected "y" where a value should be (strings need double quotes)`,
      );
      writeFileSync(file, '{\n  "server": { "port": 7411, },\n}\n');
      const trailing = await runCli(["serve", "--home", badHome]);
      expect(trailing.code).toBe(2);
      expect(trailing.stderr).toContain(
        'line 2, column 29: not valid JSON: a comma before "}" (trailing commas are not allowed)',
      );
    } finally {
      rmSync(badHome, { recursive: true, force: true });
    }
  });
});
