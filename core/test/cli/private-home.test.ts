import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { execa } from "execa";
import { SCRIPTED_PROVIDER_PLUGIN_DIR } from "@switchyard/testkit/scripted-provider";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isolatedHarnessEnv } from "../connect/isolated-harness-env.js";
import { runCli } from "../support/cli.js";
import { connectMcp, mustCall } from "../support/mcp-client.js";
import { ServeProcess } from "../support/serve-process.js";

// Switchyard's home holds transcripts, prompts, webhook bodies and credential hashes. Whatever the
// user's umask, what Switchyard creates there is the user's alone: the home and every folder in it
// 0700, every file 0600 (the database, its WAL and shared memory, logs, the lock and server
// files, connections). The CLI and a real `serve` run in child processes under the umask.

/** Every folder and file under `root` whose mode lets group or others in, with the mode. */
function openToOthers(root: string): string[] {
  const found: string[] = [];
  const visit = (path: string) => {
    const stat = lstatSync(path);
    if (stat.isSymbolicLink()) return;
    const mode = stat.mode & 0o777;
    const wanted = stat.isDirectory() ? 0o700 : 0o600;
    if (mode !== wanted) found.push(`${path.slice(root.length) || "/"} ${mode.toString(8)}`);
    if (stat.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
  };
  visit(root);
  return found;
}

const modeOf = (path: string) => (statSync(path).mode & 0o777).toString(8);

interface Report {
  findings: { subject: string; status: string; detail: string; data?: { command?: string } }[];
}

describe("the Switchyard home is private whatever the umask", () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), "switchyard-private-home-"));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  for (const umask of ["0022", "0000"]) {
    it(`creates every folder 0700 and every file 0600 under umask ${umask}: CLI commands, connect, and a server running a turn`, async () => {
      const scratch = join(root, `umask-${umask}`);
      const home = join(scratch, "not", "yet", "home");
      const workspace = join(scratch, "work");
      mkdirSync(workspace, { recursive: true });
      const env = isolatedHarnessEnv(scratch);
      const cli = async (args: string[]) => {
        const result = await runCli([...args, "--home", home], { env, umask });
        expect(result.code, result.stderr).toBe(0);
        return result.stdout;
      };
      const projectId = (JSON.parse(await cli(["project", "add", workspace, "--json"])) as { id: string }).id;
      expect(modeOf(home)).toBe("700");
      // The user's own config, written with the test's umask: tightened when Switchyard next opens the home.
      writeFileSync(
        join(home, "config.json"),
        JSON.stringify({
          plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR],
          providers: [
            {
              id: "alpha",
              driver: "scripted",
              options: { gateDir: join(scratch, "gates"), stateDir: join(scratch, "state") },
            },
          ],
          server: { port: 0 },
        }),
      );
      const { token } = JSON.parse(await cli(["token", "issue", "--json"])) as { token: string };
      await cli(["connect", "pi", "--json"]);

      const server = ServeProcess.start(home, ["--port", "0"], env, { umask });
      try {
        const client = await connectMcp((await server.ready).mcpUrl, token);
        const created = await mustCall<{ threads: { thread: { threadId: string } }[] }>(client, "create_threads", {
          projectId,
          threads: [{ prompt: "@@reply private", target: { providerInstanceId: "alpha" } }],
        });
        await mustCall(client, "t3_thread_wait", { threadId: created.threads[0]!.thread.threadId, timeoutMs: 30_000 });
        await client.close();
        // While it runs: the WAL and shared-memory files, the lock, server.json, the log.
        const running = readdirSync(home);
        expect(running).toEqual(
          expect.arrayContaining([
            "switchyard.db",
            "switchyard.db-wal",
            "switchyard.db-shm",
            "server.lock",
            "server.json",
            "logs",
            "connections",
            "config.json",
          ]),
        );
        expect(openToOthers(home)).toEqual([]);
      } finally {
        expect(await server.terminate()).toBe(0);
      }
      expect(openToOthers(home)).toEqual([]);
    }, 120_000);
  }

  it("doctor warns about a home and database others can read, with the command that fixes it; the next open tightens them and says so", async () => {
    const home = join(root, "old-home");
    mkdirSync(home);
    chmodSync(home, 0o755);
    const file = join(home, "switchyard.db");
    // As an older Switchyard left it: WAL mode, the file world-readable.
    const db = new Database(file);
    db.pragma("journal_mode = WAL");
    db.close();
    chmodSync(file, 0o644);

    const doctor = async () => {
      const result = await runCli(["doctor", "--home", home, "--json"]);
      return (JSON.parse(result.stdout) as Report).findings.find((finding) => finding.subject === "home access")!;
    };
    const warned = await doctor();
    expect(warned.status).toBe("warn");
    expect(warned.data?.command).toBe(`chmod 700 '${home}' && chmod 600 '${file}'`);
    expect(warned.detail).toContain(`${home} (mode 755), ${file} (mode 644)`);
    // Doctor only looks.
    expect([modeOf(home), modeOf(file)]).toEqual(["755", "644"]);
    await execa("/bin/sh", ["-c", warned.data!.command!]);
    expect(await doctor()).toMatchObject({ status: "ok", detail: "only this user can read the home and its database" });

    chmodSync(home, 0o755);
    chmodSync(file, 0o644);
    const listed = await runCli(["project", "list", "--json", "--home", home], {
      env: { SWITCHYARD_LOG_LEVEL: "warn", SWITCHYARD_LOG_FORMAT: "json" },
    });
    expect(listed.code, listed.stderr).toBe(0);
    expect([modeOf(home), modeOf(file)]).toEqual(["700", "600"]);
    const said = listed.stderr
      .split("\n")
      .filter((line) => line.includes("made a file in the Switchyard home private"))
      .map((line) => JSON.parse(line) as { path: string; from: string; to: string });
    expect(said).toEqual([
      expect.objectContaining({ path: home, from: "755", to: "700" }),
      expect.objectContaining({ path: file, from: "644", to: "600" }),
    ]);
  }, 60_000);
});
