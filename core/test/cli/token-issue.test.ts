import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpSessionRegistry } from "../../src/services/credentials/mcp-session-registry.js";
import { runCli } from "../support/cli.js";
import { startTestHost } from "../support/test-host.js";

/** `switchyard token issue` with verbs, projects, a mode ceiling and an expiry, and `token list` showing them. */
describe("switchyard token issue / list with scopes", () => {
  let scratch: string;
  let home: string;
  let folder: string;
  let projectId: string;
  const cli = (args: string[]) => runCli([...args, "--home", home]);

  /** What the server would make of a token: the scope the registry resolves it to. */
  const resolve = async (token: string) => {
    const t = await startTestHost({ home, start: false, providers: [] });
    try {
      const resolved = await t.host.container.resolve(McpSessionRegistry).resolve(token);
      if (!("scope" in resolved)) throw new Error(`token refused: ${resolved.rejection}`);
      return {
        capabilities: [...resolved.scope.capabilities].sort(),
        projects: resolved.scope.projects,
        ceiling: resolved.scope.ceiling,
      };
    } finally {
      await t.host.stop();
    }
  };

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), "switchyard-cli-token-"));
    home = join(scratch, "home");
    folder = join(scratch, "repo");
    mkdirSync(folder);
    projectId = (JSON.parse((await cli(["project", "add", folder, "--json"])).stdout) as { id: string }).id;
  });
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it("issues a token with verbs, projects (by id or folder), a ceiling and an expiry, and the server reads them back", async () => {
    const issued = await cli([
      "token",
      "issue",
      "--verbs",
      "read,approve",
      "--projects",
      folder,
      "--max-runtime-mode",
      "auto-accept-edits",
      "--max-interaction-mode",
      "plan",
      "--ttl",
      "2h",
      "--label",
      "approver",
      "--json",
    ]);
    expect(issued.code, issued.stderr).toBe(0);
    const body = JSON.parse(issued.stdout) as {
      id: string;
      token: string;
      expiresAt: string;
      verbs: string[];
      projects: string[];
      ceiling: unknown;
      scope: string;
    };
    expect(body).toMatchObject({
      verbs: ["read", "approve"],
      projects: [projectId],
      ceiling: { runtimeMode: "auto-accept-edits", interactionMode: "plan" },
      scope: "orchestration:read",
    });
    const lifetime = Date.parse(body.expiresAt) - Date.now();
    expect(lifetime).toBeGreaterThan(3_600_000);
    expect(lifetime).toBeLessThanOrEqual(7_200_000);
    expect(await resolve(body.token)).toEqual({
      capabilities: ["orchestration:approve", "orchestration:read"],
      projects: [projectId],
      ceiling: { runtimeMode: "auto-accept-edits", interactionMode: "plan" },
    });

    const listed = JSON.parse((await cli(["token", "list", "--json"])).stdout) as {
      id: string;
      verbs: string[];
      projects: unknown;
      ceiling: unknown;
      status: string;
    }[];
    expect(listed.find((t) => t.id === body.id)).toMatchObject({
      verbs: ["read", "approve"],
      projects: [projectId],
      ceiling: { runtimeMode: "auto-accept-edits", interactionMode: "plan" },
      status: "active",
    });
    expect(JSON.stringify(listed)).not.toContain(body.token);
    const table = (await cli(["token", "list"])).stdout;
    expect(table.split("\n").find((line) => line.includes("approver"))).toMatch(
      new RegExp(`\\sread,approve\\s+${projectId}\\s+auto-accept-edits/plan\\s+active\\s`),
    );
  });

  it("defaults to read and operate on every project, with approval-required as the ceiling, and says so", async () => {
    const issued = await cli(["token", "issue"]);
    expect(issued.code, issued.stderr).toBe(0);
    const token = issued.stdout.trim();
    expect(token).toMatch(/^sy_/);
    expect(issued.stderr).toContain("verbs: read, operate");
    expect(issued.stderr).toContain("projects: every project");
    expect(issued.stderr).toContain("ceiling: runtime approval-required, interaction default");
    expect(issued.stderr).toContain("--max-runtime-mode full-access");
    expect(issued.stderr).not.toContain(token);
    expect(await resolve(token)).toEqual({
      capabilities: ["orchestration:operate", "orchestration:read"],
      projects: "*",
      ceiling: { runtimeMode: "approval-required", interactionMode: "default" },
    });
    // The older --scope still works and means the same verbs.
    const scoped = JSON.parse(
      (await cli(["token", "issue", "--scope", "orchestration:read", "--projects", "*", "--json"])).stdout,
    ) as { verbs: string[]; projects: string };
    expect(scoped).toMatchObject({ verbs: ["read"], projects: "*" });
  });

  it("issues an install token for every project, and --help says what install is for", async () => {
    const issued = JSON.parse((await cli(["token", "issue", "--verbs", "install", "--json"])).stdout) as {
      token: string;
      verbs: string[];
      projects: string;
    };
    expect(issued).toMatchObject({ verbs: ["read", "install"], projects: "*" });
    expect((await resolve(issued.token)).capabilities).toEqual(["orchestration:install", "orchestration:read"]);
    const help = await runCli(["token", "issue", "--help"]);
    expect(help.stdout.replace(/\s+/g, " ")).toContain(
      "install (server-wide installs: the ACP Registry's install jobs; needs --projects '*')",
    );
    expect(help.stdout.replace(/\s+/g, " ")).toContain(
      "only an operate token for every project with --max-runtime-mode full-access may start installs",
    );
  });

  it("refuses what it cannot honour, naming it", async () => {
    const cases: [string[], number, string][] = [
      [["--verbs", "read,admin"], 2, '"admin" is not a verb; use read, operate, approve or install'],
      [
        ["--verbs", "read,install", "--projects", folder],
        2,
        "The install verb installs for the whole server, so it needs --projects '*'",
      ],
      [["--verbs", ","], 2, "Name at least one verb"],
      [["--projects", "*,other"], 2, '"*" already means every project'],
      [["--projects", join(scratch, "nowhere")], 3, "No project has the id or folder"],
      // The README's old example on a fresh home: the folder exists but is no project yet.
      [
        ["--projects", scratch],
        3,
        `${scratch} is not a Switchyard project. Add it with: switchyard project add ${scratch}`,
      ],
      [
        ["--max-runtime-mode", "yolo"],
        2,
        '"yolo" is not a runtime mode; use approval-required, auto-accept-edits, full-access',
      ],
      [["--max-interaction-mode", "auto"], 2, '"auto" is not an interaction mode'],
      [["--scope", "orchestration:read", "--verbs", "read"], 2, "Pass --verbs or --scope, not both"],
    ];
    const before = (JSON.parse((await cli(["token", "list", "--json"])).stdout) as unknown[]).length;
    for (const [args, code, message] of cases) {
      const result = await cli(["token", "issue", ...args]);
      expect([args.join(" "), result.code, result.stderr.includes(message) ? message : result.stderr]).toEqual([
        args.join(" "),
        code,
        message,
      ]);
      expect(result.stdout).toBe("");
    }
    expect((JSON.parse((await cli(["token", "list", "--json"])).stdout) as unknown[]).length).toBe(before);
  });
});
