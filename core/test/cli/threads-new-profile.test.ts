import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SCRIPTED_PROVIDER_PLUGIN_DIR } from "@switchyard/testkit/scripted-provider";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { readRow, ServeProcess, writeHomeConfig } from "../support/serve-process.js";

/**
 * `--profile` on the commands that start work (`threads new`, `run`), against a real `serve`
 * with scripted providers: the profile picks the provider, explicit options narrow it and
 * never widen it, an unknown name is refused listing the available ones.
 */
describe("switchyard threads new --profile (real serve, scripted providers)", () => {
  let root: string;
  let home: string;
  let workspace: string;
  let serve: ServeProcess;
  const cli = (args: string[]) => runCli([...args, "--home", home], { timeoutMs: 120_000, cwd: workspace });
  const threadRow = (threadId: string) =>
    readRow<{ provider: string; mode: string; profile: string | null }>(
      home,
      "SELECT json_extract(data, '$.providerInstanceId') AS provider, json_extract(data, '$.runtimeMode') AS mode, json_extract(data, '$.profile.name') AS profile FROM threads WHERE id = ?",
      [threadId],
    );

  beforeAll(async () => {
    root = realpathSync(mkdtempSync(join(tmpdir(), "switchyard-threads-profile-")));
    home = join(root, "home");
    workspace = join(root, "work");
    const gateDir = join(root, "gates");
    mkdirSync(join(workspace, ".switchyard", "agents"), { recursive: true });
    writeFileSync(
      join(workspace, ".switchyard", "agents", "reviewer.md"),
      "---\ndescription: Reviews a change\ntarget:\n  providerInstanceId: beta\nmaxRuntimeMode: auto-accept-edits\n---\nReview the change.\n",
    );
    const options = { gateDir, stateDir: join(root, "state") };
    writeHomeConfig(home, {
      plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR],
      providers: [
        { id: "alpha", driver: "scripted", options },
        { id: "beta", driver: "scripted", options },
      ],
      profiles: [{ name: "planner", description: "Plans only", maxInteractionMode: "plan" }],
    });
    const added = await cli(["project", "add", workspace]);
    expect(added.code, added.stderr).toBe(0);
    serve = ServeProcess.start(home);
    await serve.ready;
  }, 120_000);
  afterAll(async () => {
    await serve?.terminate();
    rmSync(root, { recursive: true, force: true });
  });

  it("documents --profile on threads new and run", async () => {
    for (const command of [["threads", "new"], ["run"]]) {
      const help = await runCli([...command, "--help"]);
      expect(help.stdout).toContain("--profile <name>");
    }
  });

  it("the profile picks its provider; --mode narrows it; a wider --mode and an unknown profile are refused", async () => {
    const created = await cli(["threads", "new", "@@reply reviewed", "--profile", "reviewer"]);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toContain("profile reviewer");
    // The CLI's default mode (approval-required) is narrower than the profile's ceiling.
    expect(threadRow(created.stdout.trim())).toEqual({
      provider: "beta",
      mode: "approval-required",
      profile: "reviewer",
    });

    const narrowed = await cli([
      "threads",
      "new",
      "@@reply narrowed",
      "--profile",
      "reviewer",
      "--mode",
      "auto-accept-edits",
    ]);
    expect(narrowed.code, narrowed.stderr).toBe(0);
    expect(threadRow(narrowed.stdout.trim())).toMatchObject({ mode: "auto-accept-edits" });

    const wider = await cli(["threads", "new", "@@reply wide", "--profile", "reviewer", "--mode", "full-access"]);
    expect(wider.code).not.toBe(0);
    expect(wider.stderr).toContain('broader than profile "reviewer" allows');

    const unknown = await cli(["threads", "new", "@@reply nope", "--profile", "reviewr"]);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('There is no profile "reviewr"');
    expect(unknown.stderr).toContain('"reviewer", "planner"');
  }, 180_000);
});
