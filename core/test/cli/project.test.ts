import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { startTestHost } from "../support/test-host.js";

describe("switchyard project add / list / remove", () => {
  let scratch: string;
  let home: string;
  let folder: string;
  const cli = (args: string[]) => runCli([...args, "--home", home]);
  const listed = async () =>
    JSON.parse((await cli(["project", "list", "--json"])).stdout) as { id: string; name: string; rootPath: string }[];

  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), "switchyard-cli-project-"));
    home = join(scratch, "home");
    folder = join(scratch, "api");
    mkdirSync(folder);
  });
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it("refuses an empty name with exit code 2", async () => {
    for (const name of ["", "   "]) {
      const result = await cli(["project", "add", folder, "--name", name]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain("A project name cannot be empty");
    }
    expect(await listed()).toEqual([]);
  });

  it("adds a folder once; adding it again with another name renames it and says so", async () => {
    const added = await cli(["project", "add", folder]);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toMatch(/^Added project api \(project_[0-9a-f]{16}\) at /);
    const again = await cli(["project", "add", folder]);
    expect(again.stdout).toContain("already exists");
    const renamed = await cli(["project", "add", folder, "--name", "billing-api"]);
    expect(renamed.code, renamed.stderr).toBe(0);
    expect(renamed.stdout).toMatch(/^Renamed project project_[0-9a-f]{16} at .* from api to billing-api$/);
    const projects = await listed();
    expect(projects).toHaveLength(1);
    expect(projects[0]).toMatchObject({ name: "billing-api", rootPath: folder });
  });

  it("removes a project by path or id, and a removed folder can be added again", async () => {
    const [project] = await listed();
    const removed = await cli(["project", "remove", folder]);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toBe(`Removed project billing-api (${project!.id}); ${folder} was not touched.`);
    expect(await listed()).toEqual([]);
    const gone = await cli(["project", "remove", project!.id]);
    expect(gone.code).toBe(3);

    // Not a replay of the first add: a new project, with the name asked for now.
    const back = await cli(["project", "add", folder, "--name", "api-again", "--json"]);
    expect(back.code, back.stderr).toBe(0);
    expect(JSON.parse(back.stdout)).toMatchObject({ id: project!.id, name: "api-again" });
    expect((await listed()).map((p) => p.name)).toEqual(["api-again"]);
    const byId = await cli(["project", "remove", project!.id]);
    expect(byId.code, byId.stderr).toBe(0);
  });

  it("refuses to remove a project that has threads, and a removal survives rebuilding the projections", async () => {
    const t = await startTestHost({ home: join(scratch, "host-home") });
    try {
      const used = await t.host.projects.add(t.workspace, "used");
      const unused = await t.host.projects.add(folder, "unused");
      await t.host.threads.createThread({
        projectId: used.id,
        providerInstanceId: "scripted",
        title: "a thread",
        prompt: "@@reply hi",
        createdBy: "user",
        creationSource: "cli",
      });
      await expect(t.host.projects.remove(used.id)).rejects.toThrow(/has 1 thread, so it cannot be removed/);
      expect((await t.host.projects.remove(unused.id)).id).toBe(unused.id);
      // In its turn: the thread's run may still be writing (a transaction that awaits), and a
      // write from outside an open transaction is refused.
      await t.host.store.writeAsync(() => t.host.store.rebuildProjections());
      expect((await t.host.projects.list()).map((p) => p.name)).toEqual(["used"]);
    } finally {
      await t.cleanup();
    }
  });
});
