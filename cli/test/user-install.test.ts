import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { execa, type ResultPromise } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CHECKOUT,
  folderBytes,
  installCli,
  installedPackages,
  nativeModules,
  packWorkspaces,
  startLocalRegistry,
  type LocalRegistry,
  type PackedPackage,
} from "../scripts/user-install.mjs";

// Switchyard installed as a user installs it: every workspace packed, `npm install -g
// @switchyard/cli` into an empty prefix outside this checkout, from a loopback registry only
// (the @switchyard packages from the tarballs, every other package from the checkout's
// package-lock.json and npm's cache, npm's own cache empty so every tarball passes through that
// registry, and a proxy refusing every host but loopback), then the installed `switchyard` run
// with a PATH and HOME of its own. The harnesses are not in that install: the
// delegation uses a Codex and a Pi from a separate install (this checkout's dev copies, linked
// onto PATH the way `npm i -g` links a bin).

/** The harness packages a lean install must not pull. */
const HARNESS_PACKAGES = [
  "@openai/codex",
  "@openai/codex-sdk",
  "@anthropic-ai/claude-agent-sdk",
  "@anthropic-ai/claude-code",
  "opencode-ai",
  "@earendil-works/pi-coding-agent",
  "@mariozechner/pi-coding-agent",
  "@google/gemini-cli",
];

let work: string;
let prefix: string;
let packed: PackedPackage[];
let registry: LocalRegistry;
/** Requests to hosts other than loopback that the install's proxy refused. */
let refused: string[];
let switchyard: string;
/** PATH with node and the installed bin, and no harness. */
let basePath: string;

/** The environment every installed command runs with: its own HOME, no npm prefix of this checkout. */
function userEnv(home: string, path = basePath): Record<string, string> {
  return { PATH: path, HOME: home, LANG: "C.UTF-8", NO_COLOR: "1" };
}

/** A home as Switchyard makes one: 0700 (doctor warns about one others can read). */
function newHome(name: string): string {
  const home = join(work, name);
  mkdirSync(home, { recursive: true, mode: 0o700 });
  return home;
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "switchyard-user-install-"));
  packed = await packWorkspaces(join(work, "tarballs"));
  registry = await startLocalRegistry(packed);
  try {
    prefix = join(work, "prefix");
    mkdirSync(prefix);
    ({ refused } = await installCli({ prefix, registry, env: process.env, cache: join(work, "npm-cache") }));
  } finally {
    await registry.close();
  }
  switchyard = join(prefix, "bin", "switchyard");
  basePath = [join(prefix, "bin"), dirname(process.execPath), "/usr/bin", "/bin"].join(":");
}, 600_000);

afterAll(() => {
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

describe("npm install -g @switchyard/cli, from the packed workspaces", () => {
  it("packs every workspace with its README, its built entry points and no test or build state", () => {
    for (const pkg of packed) {
      expect(pkg.files, pkg.name).toContain("README.md");
      expect(pkg.files, pkg.name).toContain("package.json");
      expect(
        pkg.files.filter((file) => file.includes(".tsbuildinfo") || file.startsWith("test/")),
        pkg.name,
      ).toEqual([]);
      expect((pkg.manifest["engines"] as { node?: string } | undefined)?.node, pkg.name).toBe(">=22.19");
      const exported = pkg.manifest["exports"] as Record<string, string | { types: string; default: string }>;
      for (const [key, target] of Object.entries(exported)) {
        for (const file of typeof target === "string" ? [target] : [target.types, target.default])
          expect(pkg.files, `${pkg.name} exports ${key}`).toContain(file.replace(/^\.\//, ""));
      }
    }
  });

  it("installs the CLI, every built-in plugin and no harness, outside this checkout, with one native module", () => {
    const installed = installedPackages(join(prefix, "lib", "node_modules"));
    const names = new Set(installed.map((pkg) => pkg.name));
    for (const pkg of packed) expect(names.has(pkg.name), pkg.name).toBe(true);
    for (const harness of HARNESS_PACKAGES) expect(names.has(harness), harness).toBe(false);
    for (const pkg of installed) expect(realpathSync(pkg.dir).startsWith(CHECKOUT), pkg.dir).toBe(false);
    expect(nativeModules(prefix).map((file) => file.slice(prefix.length))).toEqual([
      "/lib/node_modules/@switchyard/cli/node_modules/better-sqlite3/build/Release/better_sqlite3.node",
    ]);
    // The footprint goal: under 60 MB without harnesses (npm run bench prints the figure).
    expect(folderBytes(prefix)).toBeLessThan(60 * 1024 * 1024);
  });

  it("installs over loopback only: the loopback registry served the packument and tarball of every package installed; what it could not answer is an optional peer nothing installed", () => {
    expect(refused).toEqual([]);
    expect(registry.missingFromCache).toEqual([]);
    const packuments = new Set(
      registry.served.filter((entry) => entry.kind === "packument").map((entry) => entry.name),
    );
    const tarballs = new Set(
      registry.served.filter((entry) => entry.kind === "tarball").map((entry) => `${entry.name}@${entry.version}`),
    );
    const installed = installedPackages(join(prefix, "lib", "node_modules"));
    const installedNames = new Set(installed.map((pkg) => pkg.name));
    for (const path of registry.unanswered) {
      const name = path.slice(1);
      expect(registry.optionalPeers.has(name) && !installedNames.has(name), `the install asked for ${path}`).toBe(true);
    }
    expect(installed.length).toBeGreaterThan(packed.length);
    for (const pkg of installed) {
      expect(packuments.has(pkg.name), `packument of ${pkg.name}`).toBe(true);
      expect(tarballs.has(`${pkg.name}@${pkg.version}`), `tarball of ${pkg.name}@${pkg.version}`).toBe(true);
    }
    expect(registry.served.filter((entry) => entry.kind === "prebuild").map((entry) => entry.name)).toEqual([
      "better-sqlite3",
    ]);
  });

  it("runs `switchyard --version`", async () => {
    const result = await execa(switchyard, ["--version"], {
      env: userEnv(newHome("version-home")),
      extendEnv: false,
      cwd: work,
      reject: false,
    });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toBe(JSON.parse(readFileSync(join(CHECKOUT, "cli", "package.json"), "utf8")).version);
  });

  it("runs `switchyard doctor`: ok on the embedded defaults, exit 1 naming what it looked for and the install command when a configured harness is missing", async () => {
    const home = newHome("doctor-home");
    // The embedded defaults but the port: the default (7410) may be taken on this machine, and
    // doctor rightly fails then (core/test/cli/doctor.test.ts holds a taken port of its own).
    writeFileSync(join(home, "config.json"), JSON.stringify({ server: { port: 0 } }));
    const clean = await execa(switchyard, ["doctor", "--home", home], {
      env: userEnv(home),
      extendEnv: false,
      cwd: work,
      reject: false,
    });
    expect(clean.exitCode, clean.stdout + clean.stderr).toBe(0);
    expect(clean.stdout).toContain("switchyard doctor: ok");
    expect(clean.stdout).toMatch(/ok +plugin @switchyard\/plugin-codex +0\.1\.0 \(builtin\)/);

    writeFileSync(
      join(home, "config.json"),
      JSON.stringify({ providers: [{ id: "oc", driver: "opencode" }], server: { port: 0 } }),
    );
    const broken = await execa(switchyard, ["doctor", "--home", home, "--json"], {
      env: userEnv(home),
      extendEnv: false,
      cwd: work,
      reject: false,
    });
    expect(broken.exitCode, broken.stderr).toBe(1);
    const report = JSON.parse(broken.stdout) as {
      findings: {
        subject: string;
        status: string;
        detail: string;
        data?: { harness?: { searched: { source: string }[] } };
      }[];
      verdict: { ok: boolean; summary: string };
    };
    expect(report.verdict).toMatchObject({ ok: false, summary: "1 problem: provider oc" });
    const finding = report.findings.find((candidate) => candidate.subject === "provider oc")!;
    expect(finding.status).toBe("fail");
    expect(finding.detail).toContain(
      "OpenCode was not found. Looked for: `opencode` on PATH; opencode-ai in the global npm root",
    );
    expect(finding.detail).toContain("Install it: npm i -g opencode-ai, or set the instance's opencodePath option.");
    expect(finding.data?.harness?.searched.map((lookup) => lookup.source)).toEqual(["path", "global", "local"]);
  });

  it("serves: MCP answers 401 without a token, and with one lists the instance whose harness is missing, with why", async () => {
    const home = newHome("serve-home");
    writeFileSync(
      join(home, "config.json"),
      JSON.stringify({ providers: [{ id: "oc", driver: "opencode" }], server: { port: 0 } }),
    );
    const issued = await execa(switchyard, ["token", "issue", "--verbs", "read", "--json", "--home", home], {
      env: userEnv(home),
      extendEnv: false,
      cwd: work,
      reject: false,
    });
    expect(issued.exitCode, issued.stderr).toBe(0);
    const { token } = JSON.parse(issued.stdout) as { token: string };
    const server: ResultPromise = execa(switchyard, ["serve", "--json", "--home", home], {
      env: userEnv(home),
      extendEnv: false,
      cwd: work,
      reject: false,
      buffer: false,
    });
    try {
      const mcpUrl = await new Promise<string>((resolve, reject) => {
        let seen = "";
        server.stdout!.on("data", (chunk: Buffer) => {
          seen += chunk.toString("utf8");
          const line = seen.split("\n").find((candidate) => candidate.startsWith("{"));
          if (line !== undefined) resolve((JSON.parse(line) as { mcpUrl: string }).mcpUrl);
        });
        void server.then((result) =>
          reject(new Error(`serve ended (${result.exitCode}) before printing its endpoint`)),
        );
      });
      const refused = await fetch(mcpUrl, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: {} }),
      });
      expect(refused.status).toBe(401);

      const client = new Client({ name: "user-install-test", version: "1.0.0" });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(mcpUrl), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      );
      try {
        // The snapshot is probed when the server starts; read it until that probe has answered.
        let constraints: string[] = [];
        for (let attempt = 0; attempt < 40; attempt += 1) {
          const result = (await client.callTool({ name: "orchestrator_capabilities", arguments: {} })) as unknown as {
            structuredContent: {
              providers: { providerInstanceId: string; canRunChildTasks: boolean; constraints: string[] }[];
            };
          };
          const oc = result.structuredContent.providers.find((provider) => provider.providerInstanceId === "oc");
          expect(oc?.canRunChildTasks).toBe(false);
          constraints = oc?.constraints ?? [];
          if (constraints.some((constraint) => constraint.includes("not found"))) break;
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
        expect(constraints.join(" ")).toContain("OpenCode was not found. Looked for: `opencode` on PATH");
        expect(constraints.join(" ")).toContain("npm i -g opencode-ai");
      } finally {
        await client.close();
      }
    } finally {
      server.kill("SIGTERM");
      await server;
    }
  });

  it("runs a delegation from Codex to Pi with harnesses from a separate install on PATH (switchyard demo)", async () => {
    const harnessBin = join(work, "harness-bin");
    mkdirSync(harnessBin);
    // What `npm i -g @openai/codex @earendil-works/pi-coding-agent` links into a prefix's bin.
    symlinkSync(join(CHECKOUT, "node_modules", "@openai", "codex", "bin", "codex.js"), join(harnessBin, "codex"));
    symlinkSync(
      join(CHECKOUT, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "bundle", "cli.js"),
      join(harnessBin, "pi"),
    );
    const home = newHome("demo-home");
    const demo = await execa(switchyard, ["demo"], {
      env: userEnv(home, `${harnessBin}:${basePath}`),
      extendEnv: false,
      cwd: work,
      reject: false,
      timeout: 300_000,
    });
    expect(demo.exitCode, demo.stdout + demo.stderr).toBe(0);
    expect(demo.stdout).toContain("[assistant] Pi wrote: Steel rails cross at dawn");
    expect(demo.stdout).toMatch(/codex {2}Ask Pi for a poem {2}\(run completed\)/);
    expect(demo.stdout).toMatch(/└─ pi {2}Poem about rail yards {2}\(task [^:]+:[^ ]*: completed/);
  }, 300_000);
});
