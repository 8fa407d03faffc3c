import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { connectMcp, mustCall } from "../support/mcp-client.js";
import { installOffline, npm, packSdkTarballs, ROOT, testPlugin, userEnv } from "../support/plugin-author.js";
import { ServeProcess, writeHomeConfig } from "../support/serve-process.js";

// The plugin author of issue 11, from an empty folder outside the repository to a thread that
// runs on their plugin: `switchyard plugin new`, install, build, test (the conformance suite
// green, with the project's own vitest), `switchyard plugin install`, and a real `switchyard
// serve` whose MCP client creates a thread on the new driver. Everything runs as the user would
// run it, with two stand-ins for the network, both said where they happen.

const ROOT_PACKAGE = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  devDependencies: Record<string, string>;
};

interface PackageJson {
  name: string;
  peerDependencies?: Record<string, string>;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  switchyard?: { specVersion: string; drivers: string[]; entry: string };
}

describe("a plugin author outside the repository", () => {
  const cleanups: (() => Promise<unknown> | unknown)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  }, 60_000);

  it("scaffolds a plugin, installs, builds and tests it (conformance green), installs it into Switchyard, and a thread runs on it", async () => {
    const sdkPath = await packSdkTarballs();
    const tarball = (name: string) => sdkPath.packages.find((entry) => entry.name === name)!.path;

    const author = mkdtempSync(join(tmpdir(), "switchyard-plugin-author-"));
    cleanups.push(() => rmSync(author, { recursive: true, force: true }));
    expect(author.startsWith(ROOT)).toBe(false);

    // 1. Scaffold, in an empty folder, with the real CLI.
    const created = await runCli(["plugin", "new", "acme"], { cwd: author });
    expect(created.code, created.stderr).toBe(0);
    const dir = join(author, "acme");
    expect(created.stdout).toContain(`Created switchyard-plugin-acme in ${dir} (template process-harness)`);
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as PackageJson;
    expect(pkg.switchyard).toEqual({ specVersion: "^1.0.0", drivers: ["acme"], entry: "./dist/index.js" });
    expect(pkg.peerDependencies).toEqual({ "@switchyard/sdk": `^${sdkPath.hostVersion}` });
    // The Switchyard packages from this Switchyard's own tarballs; the tools pinned to what the
    // checkout builds with, so `npx tsc` and `npx vitest` are never another package of that name.
    expect(pkg.devDependencies).toEqual({
      "@switchyard/core": `file:${tarball("@switchyard/core")}`,
      "@switchyard/sdk": `file:${tarball("@switchyard/sdk")}`,
      "@switchyard/spec": `file:${tarball("@switchyard/spec")}`,
      "@switchyard/testkit": `file:${tarball("@switchyard/testkit")}`,
      "@types/node": ROOT_PACKAGE.devDependencies["@types/node"],
      typescript: ROOT_PACKAGE.devDependencies.typescript,
      vitest: ROOT_PACKAGE.devDependencies.vitest,
    });

    // 2. Install, offline from npm's cache (support/plugin-author.ts says how).
    const installed = await installOffline(dir);
    expect(installed.exitCode, installed.stderr).toBe(0);

    // 3. Build with the project's own TypeScript.
    const built = await npm(["run", "build"], dir, 120_000);
    expect(built.exitCode, `${built.stdout}${built.stderr}`).toBe(0);
    expect(existsSync(join(dir, "dist", "index.js"))).toBe(true);

    // 4. Test with the project's own vitest: the conformance suite and the adapter tests.
    const tested = await testPlugin(dir, "acme");
    expect(tested.notPassed, tested.failures).toEqual([]);
    expect(tested.exitCode).toBe(0);
    expect(tested.conformance.map((test) => test.ancestorTitles[0])).toContain("acme: adapter conformance");
    expect(tested.conformance.length).toBeGreaterThanOrEqual(10);

    // 5. Install it into a Switchyard home, as a user does: from its folder.
    const home = mkdtempSync(join(tmpdir(), "switchyard-plugin-author-home-"));
    const workspace = mkdtempSync(join(tmpdir(), "switchyard-plugin-author-ws-"));
    cleanups.push(
      () => rmSync(home, { recursive: true, force: true }),
      () => rmSync(workspace, { recursive: true, force: true }),
    );
    const plugin = await runCli(["plugin", "install", dir, "--json", "--home", home], {
      env: userEnv(),
      timeoutMs: 180_000,
    });
    expect(plugin.code, plugin.stderr).toBe(0);
    expect(JSON.parse(plugin.stdout)).toMatchObject({
      name: "switchyard-plugin-acme",
      drivers: ["acme"],
      source: "folder",
    });

    // 6. A real server with an instance of the new driver, and a thread over MCP with a client token.
    writeHomeConfig(home, { providers: [{ id: "acme", driver: "acme" }] });
    const project = JSON.parse((await runCli(["project", "add", workspace, "--json", "--home", home])).stdout) as {
      id: string;
    };
    const { token } = JSON.parse((await runCli(["token", "issue", "--json", "--home", home])).stdout) as {
      token: string;
    };
    const server = ServeProcess.start(home);
    cleanups.push(() => server.kill9());
    const endpoint = await server.ready;
    const client = await connectMcp(endpoint.mcpUrl, token);
    cleanups.push(() => client.close());
    const offered = await mustCall<{ providers: { providerInstanceId: string; driverKind: string }[] }>(
      client,
      "orchestrator_capabilities",
      {},
    );
    expect(offered.providers.find((entry) => entry.providerInstanceId === "acme")).toMatchObject({
      driverKind: "acme",
    });
    // The bundled harness calls a Switchyard tool with the session's own token from its
    // environment (no command, so the default runtime mode asks for no approval).
    const launched = await mustCall<{ threads: { thread: { threadId: string } }[] }>(client, "create_threads", {
      projectId: project.id,
      threads: [{ prompt: "@mcp orchestrator_capabilities {}", target: { providerInstanceId: "acme" } }],
    });
    const threadId = launched.threads[0]!.thread.threadId;
    let waited = await mustCall<{ status: string; summary: string | null; waitTimedOut: boolean }>(
      client,
      "t3_thread_wait",
      { threadId, timeoutMs: 60_000 },
    );
    for (let attempt = 0; attempt < 5 && waited.waitTimedOut; attempt++)
      waited = await mustCall(client, "t3_thread_wait", { threadId, timeoutMs: 60_000 });
    expect(waited.status, JSON.stringify(waited)).toBe("completed");
    expect(waited.summary).toContain("mcp: ");
    expect(waited.summary).toContain('"callerKind":"agent"');
    expect(await server.terminate()).toBe(0);
  }, 900_000);
});
