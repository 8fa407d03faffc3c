import { chmodSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";

/**
 * A home this user cannot write, or a missing one it cannot create: every command that needs the
 * home ends with the one line `doctor` gives for it, never a stack of dependency-injection
 * errors. Root ignores file modes, so a root test runs the CLI as `nobody`.
 */
describe("a home the user cannot write", () => {
  let root: string;
  let readOnlyHome: string;
  let missingHome: string;
  let pluginFolder: string;
  const asUser = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : undefined;
  // HOME too: nothing may reach the real user's harness configs (connect would, given a home).
  const cli = (args: string[], home: string) =>
    runCli([...args, "--home", home], {
      timeoutMs: 120_000,
      cwd: root,
      env: { HOME: join(root, "user-home") },
      ...(asUser !== undefined ? { user: asUser } : {}),
    });

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), "switchyard-unusable-home-"));
    readOnlyHome = join(root, "read-only");
    const lockedParent = join(root, "locked");
    missingHome = join(lockedParent, "home");
    pluginFolder = join(root, "plugin");
    mkdirSync(readOnlyHome);
    mkdirSync(lockedParent);
    mkdirSync(pluginFolder);
    mkdirSync(join(root, "user-home"), { mode: 0o777 });
    chmodSync(join(root, "user-home"), 0o777);
    chmodSync(readOnlyHome, 0o555);
    chmodSync(lockedParent, 0o555);
    // The other user must reach the folders (mkdtemp makes the root 0700).
    chmodSync(root, 0o755);
  });
  afterAll(() => {
    chmodSync(readOnlyHome, 0o755);
    rmSync(root, { recursive: true, force: true });
  });

  const COMMANDS: readonly (readonly string[])[] = [
    ["status"],
    ["project", "list"],
    ["project", "add", "."],
    ["token", "issue"],
    ["token", "list"],
    ["token", "revoke", "cred_x"],
    ["threads", "list"],
    ["threads", "stop", "thread_x"],
    ["run", "hello"],
    ["audit"],
    ["ui"],
    ["schedules", "list"],
    ["plugins", "list"],
    ["plugin", "install", "./plugin"],
    ["plugin", "remove", "x"],
    ["grant", "list"],
    ["link", "list"],
    ["connections"],
    ["connect", "codex"],
    ["serve", "--port", "0"],
  ];

  it("ends every command that needs it with doctor's line, exit 2, and no stack", async () => {
    const line = `${readOnlyHome} is not writable by this user: fix its permissions, or use another home (--home or SWITCHYARD_HOME).`;
    for (const command of COMMANDS) {
      const result = await cli([...command], readOnlyHome);
      expect([command.join(" "), result.code, result.stderr.trim()]).toEqual([command.join(" "), 2, `error: ${line}`]);
    }
    const doctor = await cli(["doctor"], readOnlyHome);
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toMatch(new RegExp(`FAIL\\s+home\\s+${line.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
    // Commands that only look still answer.
    expect((await cli(["providers"], readOnlyHome)).code).toBe(0);
  }, 600_000);

  it("says a missing home cannot be created, the same way", async () => {
    const line = `${missingHome} does not exist and cannot be created (${join(root, "locked")} is not writable by this user): create it, or use another home (--home or SWITCHYARD_HOME).`;
    for (const command of [
      ["status"],
      ["token", "issue"],
      ["serve", "--port", "0"],
      ["plugin", "install", "./plugin"],
    ]) {
      const result = await cli(command, missingHome);
      expect([command.join(" "), result.code, result.stderr.trim()]).toEqual([command.join(" "), 2, `error: ${line}`]);
    }
    const doctor = await cli(["doctor"], missingHome);
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toContain("does not exist and cannot be created");
  }, 300_000);
});
