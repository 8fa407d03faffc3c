import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCRIPTED_PROVIDER_PLUGIN_DIR } from "@switchyard/testkit/scripted-provider";
import { defaultProviders, McpLab } from "../support/mcp-lab.js";
import { ApiClient, ok, type FailureBody } from "../support/api-client.js";

/** The real Codex plugin, configured with an executable that is not there: a harness doctor finds missing. */
const CODEX_PLUGIN_DIR = fileURLToPath(new URL("../../../plugins/codex/", import.meta.url));

/**
 * What the web UI's first hour needs of the API: adding a project (POST /projects) and doctor's
 * provider findings (GET /providers/doctor), each with who may call it and its typed refusals.
 */
describe("the API of the first hour: adding a project and the provider doctor", () => {
  let lab: McpLab;
  let owner: ApiClient;
  const folders: string[] = [];

  beforeAll(async () => {
    lab = await McpLab.start({
      plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR, CODEX_PLUGIN_DIR],
      providers: (dirs) => [
        ...defaultProviders(dirs),
        { id: "codex", driver: "codex", options: { codexPath: join(dirs.home, "no-such-codex") } },
      ],
    });
    owner = new ApiClient(
      lab.server.apiUrl,
      lab.registry.issueClientToken({ ttlMs: 3_600_000, capabilities: ["orchestration:operate"] }).token,
    );
  });
  afterAll(async () => {
    await lab?.stop();
    for (const folder of folders) rmSync(folder, { recursive: true, force: true });
  });

  const folder = () => {
    const made = mkdtempSync(join(tmpdir(), "switchyard-first-hour-"));
    folders.push(made);
    return made;
  };
  const failure = async (answer: Promise<{ status: number; body: unknown }>) => {
    const settled = await answer;
    return { status: settled.status, ...(settled.body as FailureBody).error };
  };

  it("adds a folder as a project once: again it answers the same project, renamed when the name differs", async () => {
    const app = folder();
    const added = await owner.post("/projects", { path: app });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ existed: false, project: { name: app.split("/").at(-1), scratch: false } });
    const projectId = added.body.project.projectId as string;
    expect(
      (await ok(owner.get("/projects"))).projects.map((project: { projectId: string }) => project.projectId),
    ).toContain(projectId);

    expect(await ok(owner.post("/projects", { path: app }), 201)).toMatchObject({
      existed: true,
      project: { projectId },
    });
    expect(await ok(owner.post("/projects", { path: app, name: "the app" }), 201)).toMatchObject({
      existed: true,
      project: { projectId, name: "the app" },
    });
    expect(await lab.host.projects.get(projectId)).toMatchObject({ name: "the app" });
    // Threads can be created in it at once.
    const created = await ok(
      owner.post("/threads", { projectId, threads: [{ target: { providerInstanceId: "alpha" } }] }),
      201,
    );
    expect(created.threads[0].thread.projectId).toBe(projectId);
  });

  it("refuses a relative path, a missing folder, a file and an empty name, naming the value, and adds nothing", async () => {
    const before = (await lab.host.projects.list()).length;
    expect(await failure(owner.post("/projects", { path: "code/app" }))).toMatchObject({
      status: 400,
      code: "invalid_request",
      message: expect.stringContaining('"code/app" is not an absolute path'),
      details: { field: "path" },
    });
    const missing = join(folder(), "not-made-yet");
    expect(await failure(owner.post("/projects", { path: missing }))).toMatchObject({
      status: 400,
      code: "invalid_request",
      message: expect.stringContaining(`${missing} is not an existing folder`),
      details: { field: "path", path: missing },
    });
    const file = join(folder(), "notes.txt");
    writeFileSync(file, "not a folder");
    expect(await failure(owner.post("/projects", { path: file }))).toMatchObject({
      status: 400,
      code: "invalid_request",
      details: { path: file },
    });
    expect(await failure(owner.post("/projects", { path: folder(), name: "   " }))).toMatchObject({
      status: 400,
      code: "invalid_request",
      details: { field: "body.name" },
    });
    expect(await failure(owner.post("/projects", { path: folder(), extra: 1 }))).toMatchObject({
      status: 400,
      code: "invalid_request",
    });
    expect(await lab.host.projects.list()).toHaveLength(before);
  });

  it("lets only a client for every project add one: a read token, a project-scoped token and an agent are refused", async () => {
    const before = (await lab.host.projects.list()).length;
    const reader = owner.with(
      lab.registry.issueClientToken({ ttlMs: 60_000, capabilities: ["orchestration:read"] }).token,
    );
    expect(await failure(reader.post("/projects", { path: folder() }))).toMatchObject({
      status: 403,
      code: "capability_denied",
      details: { required: "orchestration:operate" },
    });

    const scoped = owner.with(
      lab.registry.issueClientToken({
        ttlMs: 60_000,
        capabilities: ["orchestration:operate"],
        projects: [lab.projectId],
      }).token,
    );
    expect(await failure(scoped.post("/projects", { path: folder() }))).toMatchObject({
      status: 403,
      code: "capability_denied",
      message: expect.stringContaining(`may use only the projects ${lab.projectId}`),
      details: { reason: "scoped_caller", allowedProjects: [lab.projectId] },
    });

    // An agent's own credential reaches the API too; it adds no folder of this machine.
    const { threadId, release } = await lab.liveAgent();
    const agent = owner.with(await lab.tokenFor(threadId));
    expect(await failure(agent.post("/projects", { path: folder() }))).toMatchObject({
      status: 403,
      code: "capability_denied",
      details: { reason: "clients_only", callerKind: "agent" },
    });
    release();
    expect(await lab.host.projects.list()).toHaveLength(before);
  });

  it("answers doctor's findings per instance, with the install command of a harness that is missing and the config file", async () => {
    const reader = owner.with(
      lab.registry.issueClientToken({ ttlMs: 60_000, capabilities: ["orchestration:read"] }).token,
    );
    const doctor = await ok(reader.get("/providers/doctor"));
    expect(doctor.configFile).toBe(join(lab.t.home, "config.json"));
    expect(doctor.drivers).toEqual(expect.arrayContaining(["codex", "scripted"]));
    expect(doctor.ready).toBe(true);
    const byId = new Map(
      (doctor.providers as { providerInstanceId: string }[]).map((provider) => [provider.providerInstanceId, provider]),
    );
    expect([...byId.keys()]).toEqual(["alpha", "beta", "gamma", "delta", "codex"]);
    expect(byId.get("alpha")).toMatchObject({
      status: "ok",
      canRunWork: true,
      problem: null,
      install: null,
      mcp: "http",
      enabled: true,
    });
    expect(byId.get("gamma")).toMatchObject({
      status: "info",
      canRunWork: false,
      enabled: false,
      detail: "scripted: disabled in the config",
    });
    expect(byId.get("delta")).toMatchObject({
      status: "fail",
      canRunWork: false,
      problem: expect.stringContaining("installed=false"),
      install: null,
    });
    // The real Codex plugin looked where it was told and found nothing: its finding says how to install it.
    expect(byId.get("codex")).toMatchObject({
      status: "fail",
      canRunWork: false,
      problem: expect.stringContaining(join(lab.t.home, "no-such-codex")),
      install: expect.stringContaining("@openai/codex"),
      detail: expect.stringMatching(/^codex: /),
    });
  });

  it("gives doctor's findings to clients only: an agent is refused, a token without a session sees nothing", async () => {
    const { threadId, release } = await lab.liveAgent();
    const agent = owner.with(await lab.tokenFor(threadId));
    expect(await failure(agent.get("/providers/doctor"))).toMatchObject({
      status: 403,
      code: "capability_denied",
      details: { reason: "clients_only", callerKind: "agent" },
    });
    release();
    expect(await failure(owner.with(null).get("/providers/doctor"))).toMatchObject({
      status: 401,
      code: "invalid_token",
    });
  });

  it("says in a thread's shell whether it is stopped, so a client knows when Resume means something", async () => {
    const { thread } = await lab.host.threads.createThread({
      projectId: lab.projectId,
      providerInstanceId: "alpha",
      prompt: "@@gate first-hour-stop @@reply never",
      createdBy: "user",
      creationSource: "cli",
    });
    await lab.waitForLiveTurn(thread.id);
    expect((await ok(owner.get(`/threads/${thread.id}`, { limit: 1 }))).thread.stopped).toBe(false);
    expect((await ok(owner.post(`/threads/${thread.id}/stop`, {}))).thread.stopped).toBe(true);
    expect((await ok(owner.post(`/threads/${thread.id}/resume`, {}))).thread.stopped).toBe(false);
  });
});
