import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { installOffline, npm, packSdkTarballs, ROOT, testPlugin } from "../support/plugin-author.js";

// The ACP flavor outside the repository: `plugin new --template acp-flavor`, install, build and
// its own tests, whose conformance suite drives the scripted ACP agent of the *installed*
// testkit tarball over stdio. Installing into a Switchyard and a thread on a real serve are the
// same for every plugin and run in plugin-author.test.ts.

describe("a plugin author outside the repository, ACP flavor", () => {
  let author: string | undefined;
  afterAll(() => {
    if (author !== undefined) rmSync(author, { recursive: true, force: true });
  }, 60_000);

  it("scaffolds an ACP flavor that installs, builds and passes its conformance suite", async () => {
    await packSdkTarballs();
    author = mkdtempSync(join(tmpdir(), "switchyard-plugin-author-acp-"));
    expect(author.startsWith(ROOT)).toBe(false);

    const created = await runCli(["plugin", "new", "acme", "--template", "acp-flavor"], { cwd: author });
    expect(created.code, created.stderr).toBe(0);
    const dir = join(author, "acme");
    expect(created.stdout).toContain(`Created switchyard-plugin-acme in ${dir} (template acp-flavor)`);

    const installed = await installOffline(dir);
    expect(installed.exitCode, installed.stderr).toBe(0);

    const built = await npm(["run", "build"], dir, 120_000);
    expect(built.exitCode, `${built.stdout}${built.stderr}`).toBe(0);
    expect(existsSync(join(dir, "dist", "index.js"))).toBe(true);

    const tested = await testPlugin(dir, "acme");
    expect(tested.notPassed, tested.failures).toEqual([]);
    expect(tested.exitCode).toBe(0);
    expect(tested.conformance.map((test) => test.ancestorTitles[0])).toContain(
      "acme (scripted ACP agent): adapter conformance",
    );
    expect(tested.conformance.length).toBeGreaterThanOrEqual(10);
  }, 600_000);
});
