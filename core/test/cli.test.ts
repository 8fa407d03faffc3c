import { spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCRIPTED_PROVIDER_PLUGIN_DIR } from "@switchyard/testkit/scripted-provider";
import { CLI, runCli } from "./support/cli.js";
import { callTool, connectMcp } from "./support/mcp-client.js";

describe("switchyard CLI", () => {
  let home: string;
  let workspace: string;
  beforeAll(() => {
    home = mkdtempSync(join(tmpdir(), "switchyard-cli-"));
    workspace = mkdtempSync(join(tmpdir(), "switchyard-cli-ws-"));
    writeFileSync(
      join(home, "config.json"),
      JSON.stringify({
        plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR],
        providers: [
          { id: "scripted", driver: "scripted" },
          { id: "down", driver: "scripted", options: { status: { installed: false } } },
        ],
      }),
    );
  });
  afterAll(() => {
    rmSync(home, { recursive: true, force: true });
    rmSync(workspace, { recursive: true, force: true });
  });

  it("shows help with exit code 0 and rejects an unknown command with exit code 2", async () => {
    const help = await runCli(["--help"]);
    expect(help.code).toBe(0);
    for (const command of ["serve", "providers", "plugin", "project", "token", "mcp-bridge"])
      expect(help.stdout).toContain(command);
    const sub = await runCli(["project", "--help"]);
    expect(sub.code).toBe(0);
    expect(sub.stdout).toContain("add");
    const unknown = await runCli(["frobnicate"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown command");
  });

  it("lists providers with availability and why not", async () => {
    const result = await runCli(["providers", "--json", "--home", home]);
    expect(result.code, result.stderr).toBe(0);
    const providers = JSON.parse(result.stdout) as { id: string; available: boolean; reason: string | null }[];
    expect(providers.find((p) => p.id === "scripted")).toMatchObject({ available: true, reason: null });
    expect(providers.find((p) => p.id === "down")?.reason).toContain("installed=false");
    const table = await runCli(["providers", "--home", home]);
    expect(table.stdout).toMatch(/scripted\s+scripted\s+yes/);
  });

  it("lists plugins, loaded and refused", async () => {
    const result = await runCli(["plugins", "list", "--json", "--home", home]);
    expect(result.code, result.stderr).toBe(0);
    const plugins = JSON.parse(result.stdout) as { name: string; status: string }[];
    expect(plugins.find((p) => p.name === "@switchyard/testkit-scripted-provider")?.status).toBe("loaded");
  });

  it("adds and lists projects, and refuses a folder that does not exist with exit code 2", async () => {
    const added = await runCli(["project", "add", workspace, "--name", "demo", "--json", "--home", home]);
    expect(added.code, added.stderr).toBe(0);
    const list = await runCli(["project", "list", "--json", "--home", home]);
    expect(JSON.parse(list.stdout)).toMatchObject([{ name: "demo" }]);
    const missing = await runCli(["project", "add", join(workspace, "nope"), "--home", home]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("is not an existing folder");
  });

  it("fails with exit code 2 and names the file and field for a bad config", async () => {
    const badHome = mkdtempSync(join(tmpdir(), "switchyard-bad-"));
    try {
      writeFileSync(
        join(badHome, "config.json"),
        JSON.stringify({ providers: [{ id: "x", driver: "scripted", enabled: "yes" }] }),
      );
      const result = await runCli(["serve", "--port", "0", "--home", badHome]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(join(badHome, "config.json"));
      expect(result.stderr).toContain("providers[0].enabled");
    } finally {
      rmSync(badHome, { recursive: true, force: true });
    }
  });

  it("honours NO_COLOR and FORCE_COLOR", async () => {
    const forced = await runCli(["providers", "--home", home], { env: { FORCE_COLOR: "1" } });
    expect(forced.stdout).toContain("\u001b[");
    const plain = await runCli(["providers", "--home", home], { env: { FORCE_COLOR: "1", NO_COLOR: "1" } });
    expect(plain.stdout).not.toContain("\u001b[");
  });

  it("serves on a free port, prints the MCP URL, answers a client token, and stops on SIGTERM", async () => {
    const issued = await runCli([
      "token",
      "issue",
      "--scope",
      "orchestration:read",
      "--ttl",
      "1h",
      "--label",
      "ci",
      "--json",
      "--home",
      home,
    ]);
    expect(issued.code, issued.stderr).toBe(0);
    const { token, id } = JSON.parse(issued.stdout) as { token: string; id: string };
    expect(token).toMatch(/^sy_/);
    const listed = await runCli(["token", "list", "--json", "--home", home]);
    expect(listed.stdout).not.toContain(token);
    expect(JSON.parse(listed.stdout)).toEqual(expect.arrayContaining([expect.objectContaining({ id, label: "ci" })]));

    const server = spawn(process.execPath, [CLI, "serve", "--port", "0", "--home", home], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        createInterface({ input: server.stdout! }).on("line", (line) => {
          const match = /^MCP endpoint: (\S+)/.exec(line);
          if (match) resolve(match[1]!);
        });
        server.on("exit", (code) => reject(new Error(`serve exited with ${code}`)));
      });
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      const client = await connectMcp(url, token);
      const capabilities = await callTool(client, "orchestrator_capabilities", {});
      expect(capabilities.ok).toBe(true);
      await client.close();
      const revoked = await runCli(["token", "revoke", id, "--home", home]);
      expect(revoked.code).toBe(0);
      await expect(connectMcp(url, token)).rejects.toThrow(/401|invalid_token|Unauthorized/i);
    } finally {
      server.kill("SIGTERM");
      const code = await new Promise((resolve) => server.on("exit", resolve));
      expect(code).toBe(0);
    }
  });

  it("scaffolds a plugin from the template, installs it from its folder with an integrity record, and removes it", async () => {
    // Inside the repository so the scaffold resolves the sdk and TypeScript from its node_modules.
    const scratch = fileURLToPath(new URL("./.scaffold-tmp/", import.meta.url));
    rmSync(scratch, { recursive: true, force: true });
    mkdirSync(scratch, { recursive: true });
    const pluginHome = mkdtempSync(join(tmpdir(), "switchyard-plugin-home-"));
    try {
      const created = await runCli(["plugin", "new", "acme", "--dir", scratch]);
      expect(created.code, created.stderr).toBe(0);
      const dir = join(scratch, "acme");
      await execa(process.execPath, [
        fileURLToPath(new URL("../../node_modules/typescript/bin/tsc", import.meta.url)),
        "-p",
        dir,
      ]);
      // The plugin bundles its runtime dependency (zod), which its own `npm install` would put in
      // its node_modules; here the repository's copy stands in.
      cpSync(fileURLToPath(new URL("../../node_modules/zod", import.meta.url)), join(dir, "node_modules", "zod"), {
        recursive: true,
      });
      const installed = await runCli(["plugin", "install", dir, "--json", "--home", pluginHome], {
        timeoutMs: 180_000,
      });
      expect(installed.code, installed.stderr).toBe(0);
      expect(JSON.parse(installed.stdout)).toMatchObject({
        name: "switchyard-plugin-acme",
        drivers: ["acme"],
        source: "folder",
        integrity: expect.stringMatching(/^sha512-/),
      });
      const plugins = JSON.parse((await runCli(["plugins", "list", "--json", "--home", pluginHome])).stdout) as {
        name: string;
        status: string;
        source: string;
      }[];
      expect(plugins.find((p) => p.name === "switchyard-plugin-acme")).toMatchObject({
        status: "loaded",
        source: "managed",
      });
      const wrong = await runCli(["plugin", "install", dir, "--integrity", "sha512-AAAA", "--home", pluginHome], {
        timeoutMs: 180_000,
      });
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toContain("Integrity check failed");
      const removed = await runCli(["plugin", "remove", "switchyard-plugin-acme", "--home", pluginHome]);
      expect(removed.code, removed.stderr).toBe(0);
      const after = JSON.parse((await runCli(["plugins", "list", "--json", "--home", pluginHome])).stdout) as {
        name: string;
      }[];
      expect(after.find((p) => p.name === "switchyard-plugin-acme")).toBeUndefined();
    } finally {
      rmSync(scratch, { recursive: true, force: true });
      rmSync(pluginHome, { recursive: true, force: true });
    }
  }, 300_000);
});
