import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { detectPlatform } from "@switchyard/registry-cache";
import { CLI, runCli } from "../../../core/test/support/cli.js";

// `switchyard registry …` as a user runs it: the built CLI in a child process, a temporary
// SWITCHYARD_HOME, and an ACP Registry served from 127.0.0.1 (an index plus tar.gz archives
// built here with the system tar, each holding a `#!/bin/sh` command).

/** A tar.gz holding one executable shell script. */
function scriptArchive(name: string, script: string): Buffer {
  const dir = mkdtempSync(join(tmpdir(), "cli-registry-archive-"));
  try {
    mkdirSync(join(dir, "files"));
    writeFileSync(join(dir, "files", name), script);
    chmodSync(join(dir, "files", name), 0o755);
    execFileSync("tar", ["-czf", join(dir, "a.tar.gz"), "-C", join(dir, "files"), name]);
    return readFileSync(join(dir, "a.tar.gz"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const sha256 = (body: Buffer) => createHash("sha256").update(body).digest("hex");

describe("switchyard registry", () => {
  const platform = detectPlatform();
  const otherPlatform = platform === "linux-x86_64" ? "windows-aarch64" : "linux-x86_64";
  const good = scriptArchive("tiny", '#!/bin/sh\necho "tiny agent says $TINY_GREETING $*"\n');
  const tampered = scriptArchive("tiny", "#!/bin/sh\necho tampered\n");
  let server: Server;
  let url: string;
  let home: string;

  const env = () => ({ SWITCHYARD_HOME: home, SWITCHYARD_ACP_REGISTRY_URL: url });
  const registry = (args: string[], extraEnv: Record<string, string> = {}) =>
    runCli(["registry", ...args], { env: { ...env(), ...extraEnv } });
  const cacheDir = () => join(home, "cache", "acp-registry");
  const writeConfig = (config: unknown) => writeFileSync(join(home, "config.json"), JSON.stringify(config));

  beforeAll(async () => {
    if (platform === null) throw new Error("this machine has no ACP Registry platform key");
    home = mkdtempSync(join(tmpdir(), "switchyard-cli-registry-"));
    server = createServer((request, response) => {
      const path = new URL(request.url ?? "/", "http://127.0.0.1").pathname;
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const files: Record<string, Buffer> = { "/tiny.tar.gz": good, "/tampered.tar.gz": tampered };
      if (path === "/registry.json") {
        const index = {
          version: "1.0.0",
          agents: [
            {
              id: "tiny-agent",
              name: "Tiny Agent",
              version: "1.0.0",
              description: "A tiny ACP agent for tests",
              license: "MIT",
              distribution: {
                binary: {
                  [platform]: {
                    archive: `${origin}/tiny.tar.gz`,
                    cmd: "./tiny",
                    sha256: sha256(good),
                    args: ["acp"],
                    env: { TINY_GREETING: "hello" },
                  },
                },
              },
            },
            {
              id: "tampered-agent",
              name: "Tampered Agent",
              version: "2.0.0",
              description: "Its archive does not match the declared checksum",
              // The declared checksum is the good archive's; the server sends another one.
              distribution: {
                binary: { [platform]: { archive: `${origin}/tampered.tar.gz`, cmd: "./tiny", sha256: sha256(good) } },
              },
            },
            {
              id: "elsewhere-agent",
              name: "Elsewhere Agent",
              version: "0.1.0",
              description: "Only built for another platform",
              distribution: { binary: { [otherPlatform]: { archive: `${origin}/tiny.tar.gz`, cmd: "./tiny" } } },
            },
          ],
          extensions: [],
        };
        const body = JSON.stringify(index);
        response
          .writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
          .end(body);
        return;
      }
      const file = files[path];
      if (file === undefined) response.writeHead(404).end();
      else response.writeHead(200, { "content-type": "application/gzip", "content-length": file.length }).end(file);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/registry.json`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(home, { recursive: true, force: true });
  });

  it("searches the registry, hiding agents that cannot run here unless --all", async () => {
    const json = await registry(["search", "agent", "--json"]);
    expect(json.code, json.stderr).toBe(0);
    const result = JSON.parse(json.stdout) as {
      agents: { id: string; installed: boolean; integrity: string | null }[];
      hiddenUnavailable: number;
      index: { url: string };
    };
    expect(result.agents.map((agent) => agent.id).sort()).toEqual(["tampered-agent", "tiny-agent"]);
    expect(result.agents.find((agent) => agent.id === "tiny-agent")).toMatchObject({
      installed: false,
      integrity: "sha256",
    });
    expect(result.hiddenUnavailable).toBe(1);
    expect(result.index.url).toBe(url);

    const table = await registry(["search", "tiny"]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^ID\s+NAME\s+VERSION\s+DISTRIBUTION\s+INTEGRITY\s+INSTALLED\s+DESCRIPTION$/m);
    expect(table.stdout).toMatch(
      /^tiny-agent\s+Tiny Agent\s+1\.0\.0\s+binary\s+sha256\s+no\s+A tiny ACP agent for tests$/m,
    );

    const all = await registry(["search", "elsewhere", "--all"]);
    expect(all.stdout).toMatch(/^elsewhere-agent\s+Elsewhere Agent\s+0\.1\.0\s+none for this platform/m);
    const hidden = await registry(["search", "elsewhere"]);
    expect(hidden.stdout).toContain('No agents match "elsewhere"');
    expect(hidden.stdout).toContain("1 that cannot run here are hidden (add --all)");

    // --registry-url wins over the environment.
    const flag = await runCli(["registry", "search", "tiny", "--json", "--registry-url", url], {
      env: { SWITCHYARD_HOME: home, SWITCHYARD_ACP_REGISTRY_URL: "http://127.0.0.1:9/nothing.json" },
    });
    expect(flag.code, flag.stderr).toBe(0);
  });

  it("shows one agent with its readiness and what to do next", async () => {
    const shown = await registry(["show", "tiny-agent"]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/^id\s+tiny-agent$/m);
    expect(shown.stdout).toMatch(/^distributions\s+binary$/m);
    expect(shown.stdout).toMatch(
      /^state\s+unprepared: tiny-agent 1\.0\.0 is not installed yet\. Run `switchyard registry install tiny-agent`\.$/m,
    );
    const json = JSON.parse((await registry(["show", "tiny-agent", "--json"])).stdout) as {
      readiness: { state: string };
      installed: unknown[];
    };
    expect(json.readiness.state).toBe("unprepared");
    expect(json.installed).toEqual([]);
  });

  it("installs a checksummed binary archive; the installed command runs; a second install is a no-op", async () => {
    const installed = await registry(["install", "tiny-agent"]);
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.stdout).toContain(`Installed tiny-agent 1.0.0 (binary, sha256 ${sha256(good)}) in ${cacheDir()}`);
    expect(installed.stdout).toContain('{ "driver": "acp-registry", "options": { "agentId": "tiny-agent" } }');
    // stderr is not a terminal here: no progress bar, no escape codes.
    expect(installed.stderr).toBe("");
    expect(installed.stdout).not.toContain("\u001b[");

    const listed = JSON.parse((await registry(["list", "--json"])).stdout) as {
      agentId: string;
      command: string;
      integrity: string;
      sha256: string;
      usedBy: string[];
    }[];
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ agentId: "tiny-agent", integrity: "sha256", sha256: sha256(good), usedBy: [] });
    expect(listed[0]!.command.startsWith(cacheDir())).toBe(true);
    const ran = await execa(listed[0]!.command, ["acp"], { env: { TINY_GREETING: "hello" } });
    expect(ran.stdout).toBe("tiny agent says hello acp");

    const again = await registry(["install", "tiny-agent"]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`tiny-agent 1.0.0 is already installed (binary, sha256 ${sha256(good)}).`);

    const table = await registry(["list"]);
    expect(table.stdout).toMatch(/^tiny-agent\s+1\.0\.0\s+binary\s+sha256\s+[0-9a-f]{12}…\s+\S+\s*$/m);
  });

  it("colours only when asked, and never with NO_COLOR", async () => {
    const forced = await registry(["list"], { FORCE_COLOR: "1" });
    expect(forced.stdout).toContain("\u001b[");
    const plain = await registry(["list"], { FORCE_COLOR: "1", NO_COLOR: "1" });
    expect(plain.stdout).not.toContain("\u001b[");
  });

  it("draws a progress bar on stderr only when stderr is a terminal", async () => {
    // `script` gives the CLI a pseudo-terminal. The first install already happened, so use a
    // fresh home for this one.
    const ttyHome = mkdtempSync(join(tmpdir(), "switchyard-cli-registry-tty-"));
    try {
      const command = [process.execPath, CLI, "registry", "install", "tiny-agent"].map((part) => `'${part}'`).join(" ");
      const result = await execa("script", ["-qec", command, "/dev/null"], {
        reject: false,
        env: {
          SWITCHYARD_HOME: ttyHome,
          SWITCHYARD_ACP_REGISTRY_URL: url,
          NO_COLOR: "1",
          PATH: process.env.PATH ?? "",
        },
        extendEnv: false,
        timeout: 60_000,
      });
      expect(result.exitCode, result.stdout).toBe(0);
      expect(result.stdout).toMatch(/tiny-agent: downloading \[#+\] 100%/);
      expect(result.stdout).toContain("tiny-agent: installed");
      expect(result.stdout).not.toContain("\u001b[");
    } finally {
      rmSync(ttyHome, { recursive: true, force: true });
    }
  });

  it("refuses to uninstall an agent a configured provider instance uses, then uninstalls it", async () => {
    writeConfig({ providers: [{ id: "tiny", driver: "acp-registry", options: { agentId: "tiny-agent" } }] });
    const listed = await registry(["list"]);
    expect(listed.stdout).toMatch(/^tiny-agent\s.*\stiny$/m);

    const refused = await registry(["uninstall", "tiny-agent"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      `error: in_use: tiny-agent is used by provider instance tiny in ${join(home, "config.json")}. Remove it (or change options.agentId), then uninstall again.`,
    );
    const refusedJson = await registry(["uninstall", "tiny-agent", "--json"]);
    expect(JSON.parse(refusedJson.stdout)).toMatchObject({
      error: { reason: "in_use", details: { agentId: "tiny-agent", instances: ["tiny"] } },
    });
    expect(JSON.parse((await registry(["list", "--json"])).stdout)).toHaveLength(1);

    writeConfig({ providers: [] });
    const removed = await registry(["uninstall", "tiny-agent"]);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toBe("Removed tiny-agent 1.0.0 (binary)");
    expect((await registry(["list"])).stdout).toContain("No registry agents are installed");
    expect(existsSync(join(cacheDir(), "agents", "tiny-agent"))).toBe(false);
    // Not installed is "not found", exit 3, as for every other command that names something.
    const nothing = await registry(["uninstall", "tiny-agent"]);
    expect(nothing.code).toBe(3);
    expect(nothing.stderr).toBe(
      "error: not_found: tiny-agent is not installed; nothing was removed. Run `switchyard registry list` to see installed agents.",
    );
  });

  it("refuses an archive whose checksum does not match, with a typed reason and exit code 1", async () => {
    const refused = await registry(["install", "tampered-agent"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^error: checksum_mismatch: /);
    expect(refused.stderr).toContain(sha256(good));
    expect(refused.stderr).toContain(sha256(tampered));
    const json = await registry(["install", "tampered-agent", "--json"]);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ error: { reason: "checksum_mismatch" } });
    // Nothing of it reached the cache.
    expect(existsSync(join(cacheDir(), "agents", "tampered-agent"))).toBe(false);
    expect(JSON.parse((await registry(["list", "--json"])).stdout)).toEqual([]);
  });

  it("exits 3 for an unknown agent and 2 for bad input: malformed id, disallowed registry URL, bad option", async () => {
    const unknown = await registry(["install", "no-such-agent"]);
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).toMatch(/^error: not_found: /);
    const malformed = await registry(["show", "Bad/Id"]);
    expect(malformed.stderr).toMatch(/^error: (invalid_agent_id|not_found): /);
    expect(malformed.code).toBe(malformed.stderr.startsWith("error: not_found") ? 3 : 2);
    const insecure = await registry(["search", "tiny", "--registry-url", "http://example.com/registry.json"]);
    expect(insecure.code).toBe(2);
    expect(insecure.stderr).toContain(
      "error: url_not_allowed: The registry URL http://example.com/registry.json is not allowed",
    );
    const limit = await registry(["search", "--limit", "zero"]);
    expect(limit.code).toBe(2);
    expect(limit.stderr).toContain('"zero" is not a result count');
  });

  it("fails with exit code 1 and what to do when the registry cannot be reached and nothing is cached", async () => {
    const emptyHome = mkdtempSync(join(tmpdir(), "switchyard-cli-registry-offline-"));
    try {
      const offline = await runCli(["registry", "search", "tiny"], {
        env: { SWITCHYARD_HOME: emptyHome, SWITCHYARD_ACP_REGISTRY_URL: "http://127.0.0.1:9/registry.json" },
      });
      expect(offline.code).toBe(1);
      expect(offline.stderr).toMatch(
        /^error: index_unavailable: .*Check the network or --registry-url, then retry\.$/m,
      );
    } finally {
      rmSync(emptyHome, { recursive: true, force: true });
    }
  });
});
