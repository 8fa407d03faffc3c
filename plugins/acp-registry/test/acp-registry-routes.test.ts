import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { detectPlatform } from "@switchyard/registry-cache";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiClient, type ApiAnswer, type FailureBody } from "../../../core/test/support/api-client.js";
import { McpLab } from "../../../core/test/support/mcp-lab.js";
import { SCRIPTED_PROVIDER_PLUGIN_DIR } from "../../../core/test/support/test-host.js";
import { shellScriptArchive, startRegistryFixture, type RegistryFixture } from "./support/registry-fixture.js";

// The plugin's HTTP API routes as a client meets them: a real server (McpLab) that loaded this
// plugin from its folder, the real API router in front of them, and an ACP Registry served
// from 127.0.0.1 whose archives are real tar.gz files (one of them tampered with).

const PLUGIN_DIR = fileURLToPath(new URL("..", import.meta.url));
const BASE = "/plugins/acp-registry";

interface JobView {
  jobId: string;
  agentId: string;
  version: string;
  phase: string;
  receivedBytes: number;
  totalBytes: number | null;
  percent: number | null;
  revision: number;
  alreadyInstalled: boolean | null;
  error: { code: string; message: string; details: Record<string, unknown> } | null;
}

describe("the acp-registry plugin's API routes", () => {
  const platform = detectPlatform();
  const good = shellScriptArchive("tiny", "#!/bin/sh\necho tiny\n");
  const tampered = shellScriptArchive("tiny", "#!/bin/sh\necho tampered\n");
  const savedUrl = process.env.SWITCHYARD_ACP_REGISTRY_URL;
  let fixture: RegistryFixture;
  let lab: McpLab;
  let operator: ApiClient;
  let reader: ApiClient;
  let anonymous: ApiClient;

  const issue = (capabilities: ("orchestration:read" | "orchestration:operate")[]) =>
    lab.registry.issueClientToken({ ttlMs: 3_600_000, capabilities }).token;
  const cacheDir = () => join(lab.t.home, "cache", "acp-registry");

  beforeAll(async () => {
    if (platform === null) throw new Error("this machine has no ACP Registry platform key");
    fixture = await startRegistryFixture([
      {
        id: "tiny-agent",
        name: "Tiny Agent",
        version: "1.0.0",
        description: "A tiny ACP agent for tests",
        distribution: {
          binary: { [platform]: { archive: "{{origin}}/tiny.tar.gz", cmd: "./tiny", sha256: good.sha256 } },
        },
      },
      {
        id: "tampered-agent",
        name: "Tampered Agent",
        version: "2.0.0",
        description: "Its archive does not match the declared checksum",
        distribution: {
          binary: { [platform]: { archive: "{{origin}}/tampered.tar.gz", cmd: "./tiny", sha256: good.sha256 } },
        },
      },
      {
        id: "elsewhere-agent",
        name: "Elsewhere Agent",
        version: "0.1.0",
        description: "Only built for another platform",
        distribution: { binary: { "windows-aarch64": { archive: "{{origin}}/none.zip", cmd: "./x.exe" } } },
      },
    ]);
    // Half of the good archive, then nothing until the test lets the rest go: the install is seen mid-download.
    fixture.addFile("tiny.tar.gz", good.body, { holdAfter: Math.floor(good.body.length / 2) });
    fixture.addFile("tampered.tar.gz", tampered.body);
    // The plugin reads its registry URL as `switchyard serve` would, from the environment.
    process.env.SWITCHYARD_ACP_REGISTRY_URL = fixture.url;
    lab = await McpLab.start({ plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR, PLUGIN_DIR] });
    operator = new ApiClient(lab.server.apiUrl, issue(["orchestration:operate"]));
    reader = new ApiClient(lab.server.apiUrl, issue(["orchestration:read"]));
    anonymous = new ApiClient(lab.server.apiUrl, null);
  });

  afterAll(async () => {
    await lab?.stop();
    await fixture?.close();
    if (savedUrl === undefined) delete process.env.SWITCHYARD_ACP_REGISTRY_URL;
    else process.env.SWITCHYARD_ACP_REGISTRY_URL = savedUrl;
  });

  /** Follows a job by its revisions until `until` holds (bounded in reads). */
  async function follow(jobId: string, until: (job: JobView) => boolean): Promise<{ job: JobView; seen: JobView[] }> {
    const seen: JobView[] = [];
    let revision = 0;
    for (let read = 0; read < 50; read += 1) {
      const answer = await reader.get<{ job: JobView }>(`${BASE}/install-jobs/${jobId}`, { afterRevision: revision });
      expect(answer.status, answer.text).toBe(200);
      const { job } = answer.body;
      seen.push(job);
      if (until(job)) return { job, seen };
      revision = job.revision;
    }
    throw new Error(`job ${jobId} never got there; last seen ${JSON.stringify(seen.at(-1))}`);
  }

  it("searches the registry: name, description, versions and the platforms each agent has builds for", async () => {
    const answer = await reader.get(`${BASE}/agents`, { q: "agent", all: "true" });
    expect(answer.status, answer.text).toBe(200);
    const byId = Object.fromEntries((answer.body.agents as { id: string }[]).map((agent) => [agent.id, agent]));
    expect(byId["tiny-agent"]).toMatchObject({
      name: "Tiny Agent",
      description: "A tiny ACP agent for tests",
      version: "1.0.0",
      installedVersions: [],
      installed: false,
      platforms: [platform],
      available: true,
      distribution: "binary",
    });
    expect(byId["elsewhere-agent"]).toMatchObject({
      platforms: ["windows-aarch64"],
      available: false,
      unavailableReason: "unsupported",
    });
    expect(answer.body.index).toMatchObject({ url: fixture.url, stale: false });
    // Without all=true what cannot run here is hidden, and counted.
    const runnable = await reader.get(`${BASE}/agents`, { q: "agent" });
    expect((runnable.body.agents as { id: string }[]).map((agent) => agent.id).sort()).toEqual([
      "tampered-agent",
      "tiny-agent",
    ]);
    expect(runnable.body.hiddenUnavailable).toBe(1);
    // The query is validated by the plugin's schema and refused by name.
    const bad = await reader.get<FailureBody>(`${BASE}/agents`, { limit: "many" });
    expect([bad.status, bad.body.error.code, bad.body.error.details.field]).toEqual([
      400,
      "invalid_request",
      "query.limit",
    ]);
  });

  it("installs as a job: answers at once, shows the download half-way, then done; a repeated request joins the same job and downloads once", async () => {
    const started = await operator.post<{ job: JobView; created: boolean }>(`${BASE}/install-jobs`, {
      agentId: "tiny-agent",
    });
    expect(started.status, started.text).toBe(202);
    expect(started.body.created).toBe(true);
    const { jobId } = started.body.job;
    expect(started.body.job).toMatchObject({ agentId: "tiny-agent", version: "1.0.0" });

    const half = Math.floor(good.body.length / 2);
    const midway = await follow(jobId, (job) => job.phase === "download" && job.receivedBytes === half);
    expect(midway.job).toMatchObject({
      totalBytes: good.body.length,
      percent: Math.floor((half / good.body.length) * 100),
    });
    // The same request again while it downloads: the same job, no second install.
    const again = await operator.post<{ job: JobView; created: boolean }>(`${BASE}/install-jobs`, {
      agentId: "tiny-agent",
    });
    expect([again.status, again.body.created, again.body.job.jobId]).toEqual([202, false, jobId]);

    fixture.release("tiny.tar.gz");
    const { job, seen } = await follow(
      jobId,
      (candidate) => candidate.phase === "done" || candidate.phase === "failed",
    );
    expect(job).toMatchObject({
      phase: "done",
      alreadyInstalled: false,
      percent: 100,
      receivedBytes: good.body.length,
      error: null,
    });
    // Revisions only grow, and every phase read is one the job passes through in order.
    const order = ["waiting", "download", "verify", "extract", "done"];
    const phases = [...midway.seen, ...seen].map((candidate) => order.indexOf(candidate.phase));
    expect(phases.every((index, i) => index >= 0 && (i === 0 || index >= phases[i - 1]!))).toBe(true);

    const afterDone = await operator.post<{ job: JobView; created: boolean }>(`${BASE}/install-jobs`, {
      agentId: "tiny-agent",
    });
    expect([afterDone.body.created, afterDone.body.job.jobId, afterDone.body.job.phase]).toEqual([
      false,
      jobId,
      "done",
    ]);
    expect(fixture.requestsFor("tiny.tar.gz")).toBe(1);

    const installed = await reader.get(`${BASE}/installed`);
    expect(installed.body.agents).toEqual([
      expect.objectContaining({
        agentId: "tiny-agent",
        version: "1.0.0",
        distribution: "binary",
        platform,
        integrity: "sha256",
      }),
    ]);
    const search = await reader.get(`${BASE}/agents`, { q: "tiny" });
    expect(search.body.agents[0]).toMatchObject({ id: "tiny-agent", installed: true, installedVersions: ["1.0.0"] });
  });

  it("a checksum mismatch fails the job with the typed reason and leaves nothing installed", async () => {
    const started = await operator.post<{ job: JobView }>(`${BASE}/install-jobs`, { agentId: "tampered-agent" });
    expect(started.status, started.text).toBe(202);
    const { job } = await follow(
      started.body.job.jobId,
      (candidate) => candidate.phase === "done" || candidate.phase === "failed",
    );
    expect(job.phase).toBe("failed");
    expect(job.error).toMatchObject({
      code: "checksum_mismatch",
      details: { expected: good.sha256, actual: tampered.sha256 },
    });
    expect(job.error!.message).toContain("Nothing was installed");
    const installed = await reader.get(`${BASE}/installed`);
    expect((installed.body.agents as { agentId: string }[]).map((agent) => agent.agentId)).toEqual(["tiny-agent"]);
    expect(existsSync(join(cacheDir(), "agents", "tampered-agent"))).toBe(false);
    expect(readdirSync(cacheDir()).filter((name) => name.startsWith(".tmp-"))).toEqual([]);
  });

  it("answers bad input, unknown agents and unknown jobs with typed failures", async () => {
    const badId = await operator.post<FailureBody>(`${BASE}/install-jobs`, { agentId: "Not An Id" });
    expect([badId.status, badId.body.error.code, badId.body.error.details.field]).toEqual([
      400,
      "invalid_request",
      "body.agentId",
    ]);
    const extra = await operator.post<FailureBody>(`${BASE}/install-jobs`, { agentId: "tiny-agent", force: true });
    expect([extra.status, extra.body.error.code]).toEqual([400, "invalid_request"]);
    const unknown = await operator.post<FailureBody>(`${BASE}/install-jobs`, { agentId: "no-such-agent" });
    expect([unknown.status, unknown.body.error.code, unknown.body.error.details]).toEqual([
      404,
      "not_found",
      expect.objectContaining({ reason: "not_found", plugin: "@switchyard/plugin-acp-registry" }),
    ]);
    const noJob = await reader.get<FailureBody>(`${BASE}/install-jobs/install_0000000000000000`);
    expect([noJob.status, noJob.body.error.code]).toEqual([404, "not_found"]);
  });

  it("refuses a caller without a token, and a read-only token's install, before the plugin runs", async () => {
    const before = fixture.indexRequests;
    const missing = await anonymous.post<FailureBody>(`${BASE}/install-jobs`, { agentId: "tiny-agent" });
    expect([missing.status, missing.body.error.code]).toEqual([401, "invalid_token"]);
    const wrong = await anonymous.with("sy_not_a_real_token_0000").get<FailureBody>(`${BASE}/agents`);
    expect([wrong.status, wrong.body.error.code]).toEqual([401, "invalid_token"]);
    const readOnly = await reader.post<FailureBody>(`${BASE}/install-jobs`, { agentId: "tampered-agent" });
    expect([readOnly.status, readOnly.body.error.code, readOnly.body.error.details.required]).toEqual([
      403,
      "capability_denied",
      "orchestration:install",
    ]);
    expect(fixture.indexRequests).toBe(before);
  });

  it("starts installs only for a token made for them: the install verb, or operate at full-access, for every project", async () => {
    const client = (options: Parameters<typeof lab.registry.issueClientToken>[0]) =>
      new ApiClient(lab.server.apiUrl, lab.registry.issueClientToken(options).token);
    const hour = 3_600_000;
    const fullAccess = { runtimeMode: "full-access", interactionMode: "default" } as const;
    const refused: [string, ApiClient, "project_scope" | "ceiling" | "verb"][] = [
      [
        "operate for one project",
        client({
          ttlMs: hour,
          capabilities: ["orchestration:operate"],
          projects: [lab.projectId],
          ceiling: fullAccess,
        }),
        "project_scope",
      ],
      [
        "operate below full-access",
        client({
          ttlMs: hour,
          capabilities: ["orchestration:operate"],
          ceiling: { runtimeMode: "auto-accept-edits", interactionMode: "default" },
        }),
        "ceiling",
      ],
      [
        "operate at the default ceiling",
        client({
          ttlMs: hour,
          capabilities: ["orchestration:operate"],
          ceiling: { runtimeMode: "approval-required", interactionMode: "default" },
        }),
        "ceiling",
      ],
      [
        "install for one project",
        client({ ttlMs: hour, capabilities: ["orchestration:install"], projects: [lab.projectId] }),
        "project_scope",
      ],
      [
        "approve at full-access",
        client({ ttlMs: hour, capabilities: ["orchestration:approve"], ceiling: fullAccess }),
        "verb",
      ],
    ];
    const jobsBefore = (await reader.get<{ jobs: JobView[] }>(`${BASE}/install-jobs`)).body.jobs.length;
    const indexBefore = fixture.indexRequests;
    for (const [what, caller, reason] of refused) {
      const answer = await caller.post<FailureBody>(`${BASE}/install-jobs`, { agentId: "elsewhere-agent" });
      expect([what, answer.status, answer.body.error.code, answer.body.error.details]).toEqual([
        what,
        403,
        "capability_denied",
        { required: "orchestration:install", reason },
      ]);
      expect(answer.body.error.message).toContain("--verbs read,install");
      // Reading stays allowed.
      expect((await caller.get(`${BASE}/installed`)).status).toBe(200);
    }
    // Nothing was started or even looked up.
    expect((await reader.get<{ jobs: JobView[] }>(`${BASE}/install-jobs`)).body.jobs).toHaveLength(jobsBefore);
    expect(fixture.indexRequests).toBe(indexBefore);
    // The install verb for every project is enough, whatever the ceiling; so is operate at full-access.
    const installer = client({
      ttlMs: hour,
      capabilities: ["orchestration:install"],
      ceiling: { runtimeMode: "approval-required", interactionMode: "plan" },
    });
    const started = await installer.post<{ job: JobView; created: boolean }>(`${BASE}/install-jobs`, {
      agentId: "elsewhere-agent",
    });
    expect([started.status, started.body.job.agentId]).toEqual([202, "elsewhere-agent"]);
    const operatorAtFullAccess = client({ ttlMs: hour, capabilities: ["orchestration:operate"], ceiling: fullAccess });
    expect((await operatorAtFullAccess.post(`${BASE}/install-jobs`, { agentId: "elsewhere-agent" })).status).toBe(202);
  });

  it("with the web UI's session: the cookie works only with its page secret and from the UI's origin, for reads and installs alike", async () => {
    const origin = lab.server.url;
    const fromUi = { origin, "sec-fetch-site": "same-origin" };
    const signIn: ApiAnswer = await anonymous.post("/ui/session", { token: issue(["orchestration:operate"]) }, fromUi);
    expect(signIn.status, signIn.text).toBe(200);
    const header = signIn.headers["set-cookie"];
    const cookie = String(Array.isArray(header) ? header[0] : header).split(";")[0]!;
    const page = { cookie, "x-switchyard-page-secret": (signIn.body as { pageSecret: string }).pageSecret, ...fromUi };

    const read = await anonymous.get(`${BASE}/installed`, {}, page);
    expect(read.status, read.text).toBe(200);
    const cookieAlone = await anonymous.get<FailureBody>(`${BASE}/installed`, {}, { cookie, ...fromUi });
    expect([cookieAlone.status, cookieAlone.body.error.code, cookieAlone.body.error.details.reason]).toEqual([
      401,
      "invalid_token",
      "page_secret_missing",
    ]);
    const otherPage = await anonymous.get<FailureBody>(
      `${BASE}/installed`,
      {},
      { ...page, origin: "http://127.0.0.1:1", "sec-fetch-site": "same-site" },
    );
    expect([otherPage.status, otherPage.body.error.code]).toEqual([403, "cross_origin_refused"]);
    const installByCookie = await anonymous.post<FailureBody>(
      `${BASE}/install-jobs`,
      { agentId: "tiny-agent" },
      { cookie, ...fromUi, "x-switchyard-csrf": "1" },
    );
    expect([installByCookie.status, installByCookie.body.error.code]).toEqual([401, "invalid_token"]);
    const installByPage = await anonymous.post<{ job: JobView; created: boolean }>(
      `${BASE}/install-jobs`,
      { agentId: "tiny-agent" },
      page,
    );
    expect([installByPage.status, installByPage.body.created, installByPage.body.job.phase]).toEqual([
      202,
      false,
      "done",
    ]);
  });

  it("lists the plugin's operations in the OpenAPI document, with the scope each needs", async () => {
    const document = await anonymous.get("/openapi.json");
    const paths = document.body.paths as Record<
      string,
      Record<string, { operationId: string; "x-switchyard-capability": string; tags: string[] }>
    >;
    expect(paths["/api/v1/plugins/acp-registry/install-jobs"]!.post).toMatchObject({
      operationId: "acpRegistryStartInstall",
      "x-switchyard-capability": "orchestration:install",
      tags: ["plugin:acp-registry"],
    });
    expect(paths["/api/v1/plugins/acp-registry/install-jobs/{jobId}"]!.get!["x-switchyard-capability"]).toBe(
      "orchestration:read",
    );
  });
});
