import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/config-loader.js";
import { readProfileCatalog } from "../../src/config/profiles/profile-catalog.js";

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** A project folder holding the given files (path relative to the project → content). */
function project(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "sy-profiles-"));
  folders.push(root);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}

const noConfig = { file: "/home/config.json", profiles: [] };

describe("profile catalog: the config, .switchyard/agents, and converted Claude Code and OpenCode agents", () => {
  it("reads a project profile file: front matter fields, the body as instructions, a content-hash version", async () => {
    const text = [
      "---",
      "description: Reviews changes",
      "target: { providerInstanceId: beta, model: beta-2, effort: high }",
      "maxRuntimeMode: auto-accept-edits",
      "maxInteractionMode: plan",
      "workspace: worktree",
      "tools: { deny: [Bash] }",
      "environment: { REVIEW: '1' }",
      "harnessHome: /tmp/claude-reviewer",
      "budget: { tokens: 5000 }",
      "---",
      "Review it.",
      "",
    ].join("\n");
    const root = project({ ".switchyard/agents/reviewer.md": text });
    const catalog = await readProfileCatalog({ config: noConfig, projectRoot: root });
    // Read, but a project file may not set a harness home or environment: reported (and refused when used).
    const file = join(root, ".switchyard/agents/reviewer.md");
    expect(catalog.findings.map(({ kind, profile, file, field }) => ({ kind, profile, file, field }))).toEqual([
      { kind: "untrusted", profile: "reviewer", file, field: "harnessHome" },
      { kind: "untrusted", profile: "reviewer", file, field: "environment" },
    ]);
    expect(catalog.findings[0]!.message).toContain("only a profile in your own config.json may set");
    // The same fields in the user's own config are trusted.
    const trusted = await readProfileCatalog({
      config: { file: "/home/config.json", profiles: [{ ...catalog.profiles[0]!.profile, name: "mine" }] },
      projectRoot: null,
    });
    expect(trusted.findings).toEqual([]);
    expect(catalog.profiles).toHaveLength(1);
    const [{ profile, source }] = catalog.profiles as [(typeof catalog.profiles)[number]];
    expect(profile).toEqual({
      name: "reviewer",
      description: "Reviews changes",
      instructions: "Review it.",
      target: { providerInstanceId: "beta", model: "beta-2", effort: "high" },
      maxRuntimeMode: "auto-accept-edits",
      maxInteractionMode: "plan",
      workspace: "worktree",
      tools: { allow: [], deny: ["Bash"], ask: [], allowOnly: false },
      environment: { REVIEW: "1" },
      harnessHome: "/tmp/claude-reviewer",
      budget: { tokens: 5000 },
    });
    expect(source).toMatchObject({ kind: "switchyard", file: join(root, ".switchyard/agents/reviewer.md") });
    expect(source.version).toMatch(/^sha256:[0-9a-f]{16}$/);
    // Another content is another version.
    writeFileSync(join(root, ".switchyard/agents/reviewer.md"), text.replace("Review it.", "Review it twice."));
    const again = await readProfileCatalog({ config: noConfig, projectRoot: root });
    expect(again.profiles[0]!.source.version).not.toBe(source.version);
  });

  it("converts a Claude Code agent: tools only these, disallowed tools denied, permissionMode a ceiling; reports the rest", async () => {
    const root = project({
      ".claude/agents/explorer.md": [
        "---",
        "name: explorer",
        "description: Explores read-only",
        "tools: Read, Grep, Glob",
        "disallowedTools: [Bash]",
        "model: sonnet",
        "permissionMode: plan",
        "color: blue",
        "---",
        "Explore and report.",
      ].join("\n"),
      ".claude/agents/editor.md": "---\ndescription: Edits\npermissionMode: acceptEdits\nmodel: inherit\n---\nEdit.\n",
    });
    const catalog = await readProfileCatalog({ config: noConfig, projectRoot: root });
    const byName = Object.fromEntries(catalog.profiles.map((p) => [p.profile.name, p]));
    expect(byName.explorer!.profile).toEqual({
      name: "explorer",
      description: "Explores read-only",
      instructions: "Explore and report.",
      tools: { allow: ["Read", "Grep", "Glob"], deny: ["Bash"], ask: [], allowOnly: true },
      maxInteractionMode: "plan",
    });
    expect(byName.explorer!.source.kind).toBe("claude");
    expect(byName.editor!.profile).toMatchObject({ name: "editor", maxRuntimeMode: "auto-accept-edits" });
    expect(catalog.findings.map((f) => [f.kind, f.profile, f.field])).toEqual([
      ["unconvertible", "explorer", "model"],
      ["unconvertible", "explorer", "color"],
    ]);
  });

  it("converts OpenCode agents: opencode.json v1 entries, nested v2 agent files; a disabled one is noted", async () => {
    const root = project({
      "opencode.json": JSON.stringify({
        agent: {
          docs: {
            description: "Writes docs",
            mode: "subagent",
            prompt: "Write docs.",
            tools: { write: true, bash: false },
            permission: { edit: "ask", bash: { "git push*": "deny" } },
            temperature: 0.1,
          },
          old: { description: "Old", disable: true },
        },
      }),
      ".opencode/agents/team/checker.md": [
        "---",
        "description: Checks",
        "mode: subagent",
        "model: anthropic/claude-sonnet-4-5",
        "permissions:",
        "  - { action: shell, resource: '*', effect: deny }",
        "  - { action: edit, resource: 'src/**', effect: allow }",
        "---",
        "Check it.",
      ].join("\n"),
    });
    const catalog = await readProfileCatalog({ config: noConfig, projectRoot: root });
    expect(catalog.profiles.map((p) => p.profile)).toEqual([
      {
        name: "docs",
        description: "Writes docs",
        instructions: "Write docs.",
        tools: { allow: ["write"], deny: ["bash", "bash(git push*)"], ask: ["edit"], allowOnly: false },
      },
      {
        name: "team/checker",
        description: "Checks",
        instructions: "Check it.",
        tools: { allow: ["edit(src/**)"], deny: ["shell"], ask: [], allowOnly: false },
      },
    ]);
    expect(catalog.findings.map((f) => [f.kind, f.profile, f.field])).toEqual([
      ["unconvertible", "docs", "temperature"],
      ["skipped", "old", "disable"],
      ["unconvertible", "team/checker", "model"],
    ]);
  });

  it("reads opencode.jsonc (comments, trailing commas) beside opencode.json, whose definition of a name wins", async () => {
    const root = project({
      "opencode.jsonc": [
        "{",
        "  // The team's agents.",
        '  "agent": {',
        '    "linter": { "description": "Lints", "prompt": "Lint it.", }, /* trailing comma */',
        '    "docs": { "description": "jsonc docs" },',
        "  },",
        "}",
      ].join("\n"),
      "opencode.json": JSON.stringify({ agent: { docs: { description: "json docs" } } }),
    });
    const catalog = await readProfileCatalog({ config: noConfig, projectRoot: root });
    expect(catalog.profiles.map((p) => [p.profile.name, p.profile.description, p.source.file])).toEqual([
      ["docs", "json docs", join(root, "opencode.json")],
      ["linter", "Lints", join(root, "opencode.jsonc")],
    ]);
    expect(catalog.profiles[1]!.profile.instructions).toBe("Lint it.");
    expect(catalog.findings.map((f) => [f.kind, f.profile, f.file])).toEqual([
      ["conflict", "docs", join(root, "opencode.jsonc")],
    ]);
  });

  it("the first definition of a name wins (project file, config, Claude, OpenCode); each later one is a conflict", async () => {
    const root = project({
      ".switchyard/agents/reviewer.md": "---\ndescription: project reviewer\n---\n",
      ".claude/agents/reviewer.md": "---\nname: reviewer\ndescription: claude reviewer\n---\nx\n",
      ".claude/agents/planner.md": "---\ndescription: claude planner\n---\nx\n",
      "opencode.json": JSON.stringify({ agent: { planner: { description: "opencode planner" } } }),
    });
    const config = parseConfig(
      { profiles: [{ name: "planner", description: "config planner", maxInteractionMode: "plan" }] },
      "/home/config.json",
    );
    const catalog = await readProfileCatalog({
      config: { file: "/home/config.json", profiles: config.profiles },
      projectRoot: root,
    });
    expect(catalog.profiles.map((p) => [p.profile.name, p.profile.description, p.source.kind])).toEqual([
      ["reviewer", "project reviewer", "switchyard"],
      ["planner", "config planner", "config"],
    ]);
    expect(catalog.findings.map((f) => [f.kind, f.profile, f.file])).toEqual([
      ["conflict", "planner", join(root, ".claude/agents/planner.md")],
      ["conflict", "reviewer", join(root, ".claude/agents/reviewer.md")],
      ["conflict", "planner", join(root, "opencode.json")],
    ]);
  });

  it("reports files that are not profiles, naming the field", async () => {
    const root = project({
      ".switchyard/agents/no-description.md": "---\nmaxRuntimeMode: full-access\n---\nBody.\n",
      ".switchyard/agents/bad-mode.md": "---\ndescription: x\nmaxRuntimeMode: everything\n---\n",
      ".switchyard/agents/unclosed.md": "---\ndescription: x\n",
      ".switchyard/agents/twice.md": "---\ndescription: x\ninstructions: a\n---\nb\n",
      "opencode.json": "{ not json",
    });
    const catalog = await readProfileCatalog({ config: noConfig, projectRoot: root });
    expect(catalog.profiles).toEqual([]);
    expect(catalog.findings.map((f) => [f.kind, f.profile, f.field])).toEqual([
      ["invalid", "bad-mode", "maxRuntimeMode"],
      ["invalid", "no-description", "description"],
      ["invalid", "twice", "instructions"],
      ["invalid", null, null],
      ["invalid", null, null],
    ]);
    expect(catalog.findings[3]!.message).toContain("no closing '---'");
    expect(catalog.findings[4]!.message).toContain("is not JSON");
  });

  it("a config profile is validated with the config (a bad one is config_invalid)", () => {
    expect(() =>
      parseConfig({ profiles: [{ name: "x", description: "y", maxRuntimeMode: "all" }] }, "/home/config.json"),
    ).toThrow(/profiles\[0\]\.maxRuntimeMode/);
  });
});
