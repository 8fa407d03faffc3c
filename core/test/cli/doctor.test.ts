import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { execa, type ResultPromise } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCRIPTED_PROVIDER_PLUGIN_DIR } from "@switchyard/testkit/scripted-provider";
import { CLI, runCli } from "../support/cli.js";
import { exampleFiles, readDocExamples } from "../support/doc-examples.js";

// `switchyard doctor` against real homes: a real config, the scripted provider plugin, a real
// server holding the lock, a real socket holding a port, a real SQLite database.

interface Finding {
  readonly area: string;
  readonly status: "ok" | "info" | "warn" | "fail";
  readonly subject: string;
  readonly detail: string;
}
interface Report {
  readonly findings: readonly Finding[];
  readonly verdict: { readonly ok: boolean; readonly failures: number; readonly summary: string };
}

let scratch: string;

/** Every file under a folder with its size and modification time, to show doctor changed nothing. */
function snapshot(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  const visit = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const file = join(folder, entry.name);
      if (entry.isDirectory()) visit(file);
      else {
        const stat = statSync(file);
        files[file.slice(dir.length)] = `${stat.size}:${stat.mtimeMs}`;
      }
    }
  };
  visit(dir);
  return files;
}

/** A home as Switchyard makes one (0700; private-home.test.ts covers one others can read). */
function homeWith(name: string, config: Record<string, unknown>): string {
  const home = join(scratch, name);
  mkdirSync(home, { recursive: true, mode: 0o700 });
  writeFileSync(join(home, "config.json"), JSON.stringify(config));
  return home;
}

async function doctor(
  home: string,
  env: Record<string, string> = {},
): Promise<{ code: number | null; report: Report; stdout: string }> {
  const result = await runCli(["doctor", "--home", home, "--json"], { env });
  expect(result.stderr).toBe("");
  return { code: result.code, report: JSON.parse(result.stdout) as Report, stdout: result.stdout };
}

const finding = (report: Report, subject: string) => report.findings.find((candidate) => candidate.subject === subject);

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "switchyard-doctor-"));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("switchyard doctor", () => {
  it("is ok with exit 0 when everything configured can work, and changes nothing in the home", async () => {
    const home = homeWith("ok", {
      plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR],
      providers: [{ id: "scripted", driver: "scripted" }],
      server: { port: 0 },
    });
    const before = snapshot(home);
    const { code, report } = await doctor(home);
    expect(code).toBe(0);
    expect(report.verdict).toMatchObject({ ok: true, failures: 0 });
    expect(finding(report, "provider scripted")).toMatchObject({ status: "ok" });
    expect(finding(report, "lock")?.detail).toBe("free: no server runs on this home");
    expect(finding(report, "database")?.detail).toContain("is not created yet");
    expect(snapshot(home)).toEqual(before);

    const text = await runCli(["doctor", "--home", home]);
    expect(text.code).toBe(0);
    expect(text.stdout.trim().split("\n").at(-1)).toMatch(/^switchyard doctor: ok/);
  });

  it("fails with exit 1 naming each configured thing that cannot work: a taken port, a refused plugin, a provider whose driver is missing", async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    try {
      const port = (taken.address() as { port: number }).port;
      const broken = join(scratch, "not-a-plugin");
      mkdirSync(broken, { recursive: true });
      writeFileSync(join(broken, "package.json"), JSON.stringify({ name: "not-a-plugin", version: "1.0.0" }));
      const home = homeWith("broken", {
        plugins: [broken],
        providers: [{ id: "ghost", driver: "no-such-driver" }],
        server: { port },
      });
      const { code, report } = await doctor(home);
      expect(code).toBe(1);
      expect(report.verdict.ok).toBe(false);
      const failed = report.findings.filter((candidate) => candidate.status === "fail");
      expect(failed.map((candidate) => candidate.area).sort()).toEqual(["plugin", "port", "provider"]);
      expect(finding(report, "port")?.detail).toContain(`127.0.0.1:${port} is taken by another program`);
      expect(finding(report, "provider ghost")?.detail).toContain("no-such-driver");
      expect(report.verdict.summary).toMatch(/^3 problems: /);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it("sees a running server's lock and database without touching either", async () => {
    const home = homeWith("served", {
      plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR],
      providers: [{ id: "scripted", driver: "scripted" }],
      server: { port: 0 },
    });
    const server: ResultPromise = execa(process.execPath, [CLI, "serve", "--json", "--home", home], {
      reject: false,
      buffer: false,
      stdin: "ignore",
    });
    try {
      await new Promise<void>((resolve, reject) => {
        server.stdout!.on("data", (chunk: Buffer) => {
          if (chunk.toString("utf8").includes("mcpUrl")) resolve();
        });
        void server.then((result) =>
          reject(new Error(`serve ended (${result.exitCode}) before printing its endpoint`)),
        );
      });
      const before = snapshot(home);
      const { code, report } = await doctor(home);
      expect(code).toBe(0);
      expect(finding(report, "lock")?.detail).toMatch(
        new RegExp(`^held by a running Switchyard server \\(pid ${server.pid},`),
      );
      expect(finding(report, "port")?.detail).toBe("server.port is 0: `serve` picks a free port");
      expect(finding(report, "database")?.detail).toMatch(/switchyard\.db \(schema \d+, /);
      const after = snapshot(home);
      // The running server may write its own files meanwhile; doctor adds none.
      expect(Object.keys(after).filter((file) => !(file in before))).toEqual([]);
    } finally {
      server.kill("SIGTERM");
      await server;
    }
  });

  it("refuses a database newer than this Switchyard, saying what to do", async () => {
    const home = homeWith("newer", { server: { port: 0 } });
    const db = new Database(join(home, "switchyard.db"));
    // As the server leaves it: WAL mode, its -wal and -shm removed on close.
    db.pragma("journal_mode = WAL");
    db.exec("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT)");
    db.prepare("INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)").run(999, new Date(0).toISOString());
    db.close();
    const before = snapshot(home);
    const { code, report } = await doctor(home);
    expect(code).toBe(1);
    expect(finding(report, "database")).toMatchObject({ status: "fail" });
    expect(finding(report, "database")?.detail).toContain("has schema 999, newer than this Switchyard knows");
    expect(snapshot(home)).toEqual(before);
  });

  it("warns when config.json sets a provider's environment (its keys) and others can read it", async () => {
    const home = homeWith("readable", {
      plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR],
      providers: [{ id: "scripted", driver: "scripted", environment: { GATEWAY_API_KEY: "sk-gateway-replace-me" } }],
      server: { port: 0 },
    });
    const file = join(home, "config.json");
    chmodSync(file, 0o644);
    const readable = await doctor(home);
    expect(readable.code).toBe(0);
    expect(finding(readable.report, "config")).toMatchObject({
      status: "warn",
      detail: expect.stringContaining(
        `sets the environment (API keys) of scripted and other users can read it (mode 644): run \`chmod 600 ${file}\``,
      ),
    });
    expect(readable.stdout).not.toContain("sk-gateway-replace-me");
    chmodSync(file, 0o600);
    expect(finding((await doctor(home)).report, "config")).toMatchObject({ status: "ok" });
    // Without an environment the same mode is no secret's business.
    const plain = homeWith("plain", {
      plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR],
      providers: [{ id: "scripted", driver: "scripted" }],
      server: { port: 0 },
    });
    chmodSync(join(plain, "config.json"), 0o644);
    expect(finding((await doctor(plain)).report, "config")).toMatchObject({ status: "ok" });
  });

  // A plugin README's example config, copied as it is into an empty home, passes doctor.
  for (const [plugin, example, instance] of [
    ["pi", "pi-readme", "pi"],
    ["claude", "claude-readme", "claude"],
    ["opencode", "opencode-readme", "opencode"],
  ] as const) {
    it(`passes on the ${plugin} plugin README's example config, copied as it is`, async () => {
      const readme = fileURLToPath(new URL(`../../../plugins/${plugin}/README.md`, import.meta.url));
      const [file] = exampleFiles(readDocExamples(readme), example);
      const userHome = join(scratch, example);
      const home = join(userHome, ".switchyard");
      mkdirSync(home, { recursive: true });
      writeFileSync(join(home, "config.json"), file!.text, { mode: 0o600 });
      // The user's own homes (~/.pi/agent, ~/.claude, ~/.config/opencode) are temporary ones.
      const { report } = await doctor(home, { HOME: userHome, XDG_CONFIG_HOME: join(userHome, ".config") });
      expect(finding(report, "config")).toMatchObject({ status: "ok" });
      expect(finding(report, `plugin @switchyard/plugin-${plugin}`)).toMatchObject({ status: "ok" });
      expect(finding(report, `provider ${instance}`)?.status).toMatch(/^(ok|warn)$/);
      // The port is this machine's (7410 may be another server's here); everything else passes.
      expect(report.findings.filter((candidate) => candidate.status === "fail" && candidate.area !== "port")).toEqual(
        [],
      );
    });
  }
});
