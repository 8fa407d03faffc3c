import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";

describe("switchyard profiles list [--check] (the built CLI)", () => {
  let dir: string;
  let home: string;
  let clean: string;
  let conflicting: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "sy-profiles-cli-"));
    home = join(dir, "home");
    mkdirSync(home);
    writeFileSync(
      join(home, "config.json"),
      JSON.stringify({ profiles: [{ name: "planner", description: "Plans only", maxInteractionMode: "plan" }] }),
    );
    clean = join(dir, "clean");
    mkdirSync(join(clean, ".switchyard", "agents"), { recursive: true });
    writeFileSync(join(clean, ".switchyard", "agents", "reviewer.md"), "---\ndescription: Reviews\n---\nReview.\n");
    conflicting = join(dir, "conflicting");
    mkdirSync(join(conflicting, ".claude", "agents"), { recursive: true });
    writeFileSync(
      join(conflicting, ".claude", "agents", "planner.md"),
      "---\ndescription: Claude planner\nmodel: opus\n---\nPlan.\n",
    );
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("lists the config's and the project's profiles with their source; --check passes when nothing is amiss", async () => {
    const listed = await runCli(["profiles", "list", "--home", home, "--project", clean]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/reviewer\s+switchyard\s+\S+reviewer\.md\s+Reviews/);
    expect(listed.stdout).toMatch(/planner\s+config\s+\S+config\.json\s+Plans only/);
    const checked = await runCli(["profiles", "list", "--check", "--home", home, "--project", clean]);
    expect(checked.code).toBe(0);
  });

  it("--check prints conflicts and unconverted fields and exits 1; without it they are only counted", async () => {
    const listed = await runCli(["profiles", "list", "--home", home, "--project", conflicting]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain("2 conflict(s) or field(s) not converted; run with --check");
    const checked = await runCli(["profiles", "list", "--check", "--home", home, "--project", conflicting]);
    expect(checked.code).toBe(1);
    expect(checked.stdout).toContain(
      "unconvertible: " + join(conflicting, ".claude/agents/planner.md") + ' (profile planner) model: "opus"',
    );
    expect(checked.stdout).toContain(
      "conflict: " +
        join(conflicting, ".claude/agents/planner.md") +
        ' (profile planner) name: defines profile "planner" again',
    );
    expect(checked.stderr).toContain("2 profile problem(s) found");
    const json = await runCli(["profiles", "list", "--json", "--home", home, "--project", conflicting]);
    const parsed = JSON.parse(json.stdout) as {
      profiles: { name: string; source: { kind: string } }[];
      findings: unknown[];
    };
    expect(parsed.profiles.map((p) => [p.name, p.source.kind])).toEqual([["planner", "config"]]);
    expect(parsed.findings).toHaveLength(2);
  });
});
