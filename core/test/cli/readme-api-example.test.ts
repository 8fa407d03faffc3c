import { chmodSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import { SCRIPTED_PROVIDER_PLUGIN_DIR } from "@switchyard/testkit/scripted-provider";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiClient, ok } from "../support/api-client.js";
import { CLI, runCli } from "../support/cli.js";
import { ServeProcess, writeHomeConfig, type ServeEndpoint } from "../support/serve-process.js";

const README = fileURLToPath(new URL("../../../README.md", import.meta.url));

/** The first ```sh block of a README section, as written (the test fails when the README drifts). */
function shellBlockOf(markdown: string, heading: string): string {
  const section = markdown.split(/^## /m).find((part) => part.startsWith(`${heading}\n`));
  if (section === undefined) throw new Error(`README.md has no "## ${heading}" section`);
  const block = /^```sh\n([\s\S]*?)^```$/m.exec(section);
  if (block === null) throw new Error(`README.md's "${heading}" section has no sh block`);
  return block[1]!;
}

/**
 * The README's HTTP API example, run verbatim by bash on a fresh home (no project, no token) with
 * `switchyard` on the PATH and the server running on a port the OS chose: it must create the
 * thread it says it creates.
 */
describe("the README's HTTP API example", () => {
  let root: string;
  let home: string;
  let folder: string;
  let bin: string;
  let serve: ServeProcess;
  let endpoint: ServeEndpoint;

  beforeAll(async () => {
    root = realpathSync(mkdtempSync(join(tmpdir(), "switchyard-readme-api-")));
    home = join(root, "home");
    folder = join(root, "login-service");
    bin = join(root, "bin");
    mkdirSync(folder);
    mkdirSync(bin);
    writeFileSync(join(bin, "switchyard"), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
    chmodSync(join(bin, "switchyard"), 0o755);
    // The example names a provider instance `codex`; here it is a scripted one.
    writeHomeConfig(home, {
      plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR],
      providers: [{ id: "codex", driver: "scripted", options: {} }],
    });
    serve = ServeProcess.start(home);
    endpoint = await serve.ready;
  }, 120_000);
  afterAll(async () => {
    await serve?.terminate();
    rmSync(root, { recursive: true, force: true });
  });

  it("creates the thread on a fresh home, as written", async () => {
    const example = shellBlockOf(readFileSync(README, "utf8"), "The HTTP API");
    expect(example).toContain("curl");
    const projectsBefore = await runCli(["project", "list", "--json", "--home", home]);
    expect(JSON.parse(projectsBefore.stdout)).toEqual([]);

    const { SWITCHYARD_HOME: _home, NO_COLOR: _noColor, FORCE_COLOR: _forceColor, ...inherited } = process.env;
    const ran = await execa("bash", ["-euo", "pipefail", "-c", example], {
      cwd: folder,
      reject: false,
      extendEnv: false,
      env: { ...inherited, PATH: `${bin}${delimiter}${process.env.PATH}`, SWITCHYARD_HOME: home },
      timeout: 180_000,
    });
    expect(ran.exitCode, ran.stderr).toBe(0);
    const created = JSON.parse(ran.stdout) as {
      threads: { thread: { threadId: string; projectId: string; providerInstanceId: string; runtimeMode: string } }[];
    };
    const thread = created.threads[0]!.thread;
    expect(thread).toMatchObject({ providerInstanceId: "codex", runtimeMode: "auto-accept-edits" });

    // The thread is the folder's project's, and its run answers the prompt.
    const projects = JSON.parse((await runCli(["project", "list", "--json", "--home", home])).stdout) as {
      id: string;
      rootPath: string;
    }[];
    expect(projects).toEqual([expect.objectContaining({ id: thread.projectId, rootPath: folder })]);
    const { token } = JSON.parse(
      (await runCli(["token", "issue", "--verbs", "read", "--json", "--home", home])).stdout,
    ) as { token: string };
    const waited = await ok(
      new ApiClient(`${endpoint.url}/api/v1`, token).get(`/threads/${encodeURIComponent(thread.threadId)}/wait`, {
        timeoutMs: "60000",
      }),
    );
    expect(waited).toMatchObject({ status: "completed", summary: "scripted reply to: Find why login fails" });
  }, 300_000);
});
