import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FULL_SCRIPTED_CAPABILITIES } from "@switchyard/testkit";
import { apiClientFor, FULL_ACCESS_CEILING } from "../support/api-lab.js";
import { McpLab } from "../support/mcp-lab.js";
import { callTool, mustCall } from "../support/mcp-client.js";
import { scriptedInstance } from "../support/test-host.js";

const REVIEWER = [
  "---",
  "description: Reviews a change and reports findings, most severe first",
  "target:",
  "  providerInstanceId: beta",
  "  model: beta-2",
  "  effort: high",
  "maxRuntimeMode: auto-accept-edits",
  "---",
  "Review the change. Report findings, most severe first.",
  "",
].join("\n");

const versionOf = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex").slice(0, 16)}`;
const AVAILABLE = ["reviewer", "planner", "no-shell"];

type Shell = { threadId: string; profile?: unknown };
type Created = { threads: { index: number; runId: string | null; notes: string[]; thread: Shell }[] };

/**
 * `profile` on create_threads, t3_thread_launch and the HTTP API's POST /threads, and the
 * profiles offered to a caller (orchestrator_capabilities, GET /profiles): one shared path with
 * delegate_task (core/test/mcp/profiles.test.ts), over the real endpoint, engine and SQLite.
 */
describe("profile on every entry point that starts work (real MCP endpoint and HTTP API; scripted providers)", () => {
  let lab: McpLab;
  let reviewerFile: string;
  beforeAll(async () => {
    const { tools } = FULL_SCRIPTED_CAPABILITIES;
    // Everything the scripted provider does, but no tool rules.
    const bare = {
      ...FULL_SCRIPTED_CAPABILITIES,
      tools: { ...tools, rules: { allow: false, deny: false, ask: false, allowOnly: false } },
    };
    lab = await McpLab.start({
      providers: ({ home, gateDir }) => [
        scriptedInstance("alpha", { gateDir, stateDir: `${home}/scripted-state`, models: ["alpha-large"] }),
        scriptedInstance("beta", {
          gateDir,
          stateDir: `${home}/scripted-state`,
          models: ["beta-1", "beta-2"],
          modelEfforts: { "beta-2": ["low", "high"] },
        }),
        scriptedInstance("bare", { gateDir, stateDir: `${home}/scripted-state`, capabilities: bare }),
      ],
      profiles: [
        {
          name: "planner",
          description: "Plans the work, changes nothing",
          maxInteractionMode: "plan",
          instructions: "Only plan.",
        },
        { name: "no-shell", description: "Works without a shell", tools: { deny: ["shell"] } },
      ],
    });
    mkdirSync(join(lab.t.workspace, ".switchyard", "agents"), { recursive: true });
    reviewerFile = join(lab.t.workspace, ".switchyard", "agents", "reviewer.md");
    writeFileSync(reviewerFile, REVIEWER);
  });
  afterAll(async () => lab.stop());

  const thread = (threadId: string) => lab.host.store.get("thread", threadId)!;
  /** The instructions the thread's first turn went to its provider with. */
  const instructionsOf = async (threadId: string) => {
    const attempt = await lab.host.waiter.waitFor(
      () => lab.host.store.select("attempt", "thread_id = ?", [threadId])[0] ?? null,
      { timeoutMs: 10_000 },
    );
    return attempt?.instructions ?? null;
  };
  const reviewerStamp = () => ({
    name: "reviewer",
    source: "switchyard",
    file: reviewerFile,
    version: versionOf(readFileSync(reviewerFile, "utf8")),
  });

  describe("create_threads", () => {
    it("applies a profile per entry: target, mode ceiling, instructions with the prompt; the thread records it", async () => {
      const parent = await lab.liveAgent({ instance: "alpha", runtimeMode: "full-access" });
      const created = await mustCall<Created>(parent.client, "create_threads", {
        threads: [
          { prompt: "@@reply reviewed", profile: "reviewer" },
          { prompt: "@@reply planned", profile: "planner", title: "plan" },
          { prompt: "@@reply plain" },
        ],
      });
      const [reviewed, planned, plain] = created.threads.map((entry) => entry.thread.threadId) as [
        string,
        string,
        string,
      ];
      expect(thread(reviewed)).toMatchObject({
        providerInstanceId: "beta",
        model: "beta-2",
        effort: "high",
        runtimeMode: "auto-accept-edits",
        interactionMode: "default",
        profile: reviewerStamp(),
      });
      expect(created.threads[0]!.thread.profile).toEqual(reviewerStamp());
      expect(await instructionsOf(reviewed)).toBe("Review the change. Report findings, most severe first.");
      expect(thread(planned)).toMatchObject({
        providerInstanceId: "alpha",
        interactionMode: "plan",
        runtimeMode: "full-access",
        profile: { name: "planner", source: "config" },
      });
      expect(await instructionsOf(planned)).toBe("Only plan.");
      expect(thread(plain).profile ?? null).toBeNull();
      parent.release();
    });

    it("explicit fields narrow the profile; widening is refused naming the entry and the field", async () => {
      const parent = await lab.liveAgent({ instance: "alpha", runtimeMode: "full-access" });
      const narrowed = await mustCall<Created>(parent.client, "create_threads", {
        threads: [{ prompt: "@@reply narrow", profile: "reviewer", runtimeMode: "approval-required" }],
      });
      expect(thread(narrowed.threads[0]!.thread.threadId).runtimeMode).toBe("approval-required");
      const wider = await callTool(parent.client, "create_threads", {
        threads: [
          { prompt: "@@reply ok" },
          { prompt: "@@reply wide", profile: "reviewer", runtimeMode: "full-access" },
        ],
      });
      expect(wider).toMatchObject({
        ok: false,
        code: "runtime_mode_escalation_denied",
        details: { index: 1, field: "runtimeMode", profile: "reviewer", limit: "auto-accept-edits" },
      });
      expect((wider as { message: string }).message).toMatch(/^threads\[1\]: /);
      const otherModel = await callTool(parent.client, "create_threads", {
        threads: [{ prompt: "@@reply other", profile: "reviewer", target: { model: "beta-1" } }],
      });
      expect(otherModel).toMatchObject({
        ok: false,
        code: "invalid_request",
        details: { index: 0, field: "target.model", profile: "reviewer", profileValue: "beta-2" },
      });
      // Instructions go with the first prompt: an entry without one cannot carry them.
      const noPrompt = await callTool(parent.client, "create_threads", { threads: [{ profile: "planner" }] });
      expect(noPrompt).toMatchObject({ ok: false, code: "invalid_request", details: { index: 0, field: "prompt" } });
      parent.release();
    });

    it("an unknown profile is a typed failure listing the available ones; nothing is created", async () => {
      const parent = await lab.liveAgent({ instance: "alpha" });
      const before = lab.host.store.select("thread", "1 = 1", []).length;
      const unknown = await callTool(parent.client, "create_threads", {
        threads: [{ prompt: "@@reply nope", profile: "reviewr" }],
      });
      expect(unknown).toMatchObject({
        ok: false,
        code: "invalid_request",
        details: { index: 0, profile: "reviewr", availableProfiles: AVAILABLE },
      });
      expect(lab.host.store.select("thread", "1 = 1", []).length).toBe(before);
      parent.release();
    });

    it("a tool rule the selected provider cannot enforce is refused, naming provider and capability", async () => {
      const parent = await lab.liveAgent({ instance: "alpha" });
      const refused = await callTool(parent.client, "create_threads", {
        threads: [{ prompt: "@@reply never", profile: "no-shell", target: { providerInstanceId: "bare" } }],
      });
      expect(refused).toMatchObject({
        ok: false,
        code: "capability_denied",
        details: { reason: "profile_not_enforceable", providerInstanceId: "bare", capability: "tools.rules.deny" },
      });
      const carried = await mustCall<Created>(parent.client, "create_threads", {
        threads: [{ prompt: "@@reply fine", profile: "no-shell" }],
      });
      expect(thread(carried.threads[0]!.thread.threadId).harness).toMatchObject({
        toolRules: { deny: ["shell"] },
      });
      parent.release();
    });
  });

  describe("t3_thread_launch", () => {
    type Launched = { thread: Shell; runId: string; notes: string[] };
    it("applies the profile, narrows, refuses widening and unknown profiles", async () => {
      const parent = await lab.liveAgent({ instance: "alpha", runtimeMode: "full-access" });
      const launched = await mustCall<Launched>(parent.client, "t3_thread_launch", {
        message: "@@reply launched",
        profile: "reviewer",
      });
      expect(thread(launched.thread.threadId)).toMatchObject({
        providerInstanceId: "beta",
        model: "beta-2",
        effort: "high",
        runtimeMode: "auto-accept-edits",
        profile: reviewerStamp(),
      });
      expect(launched.thread.profile).toEqual(reviewerStamp());
      expect(await instructionsOf(launched.thread.threadId)).toBe(
        "Review the change. Report findings, most severe first.",
      );
      const narrowed = await mustCall<Launched>(parent.client, "t3_thread_launch", {
        message: "@@reply narrow",
        profile: "planner",
        runtimeMode: "approval-required",
      });
      expect(thread(narrowed.thread.threadId)).toMatchObject({
        runtimeMode: "approval-required",
        interactionMode: "plan",
      });
      const wider = await callTool(parent.client, "t3_thread_launch", {
        message: "@@reply wide",
        profile: "planner",
        interactionMode: "default",
      });
      expect(wider).toMatchObject({
        ok: false,
        code: "interaction_mode_escalation_denied",
        details: { field: "interactionMode", profile: "planner", limit: "plan" },
      });
      const unknown = await callTool(parent.client, "t3_thread_launch", { message: "@@reply x", profile: "nobody" });
      expect(unknown).toMatchObject({
        ok: false,
        code: "invalid_request",
        details: { profile: "nobody", availableProfiles: AVAILABLE },
      });
      parent.release();
    });
  });

  describe("HTTP API", () => {
    it("POST /threads applies a project's profile to the named project; narrows, refuses widening and unknown ones", async () => {
      const operator = apiClientFor(lab, { capabilities: ["orchestration:operate"], ceiling: FULL_ACCESS_CEILING });
      const created = await operator.post<Created>("/threads", {
        projectId: lab.projectId,
        threads: [{ prompt: "@@reply over http", profile: "reviewer" }],
      });
      expect(created.status, created.text).toBe(201);
      const threadId = created.body.threads[0]!.thread.threadId;
      expect(thread(threadId)).toMatchObject({
        providerInstanceId: "beta",
        runtimeMode: "auto-accept-edits",
        profile: reviewerStamp(),
      });
      expect(await instructionsOf(threadId)).toBe("Review the change. Report findings, most severe first.");
      const read = await operator.get<{ thread: Shell }>(`/threads/${threadId}`);
      expect(read.body.thread.profile).toEqual(reviewerStamp());

      const narrowed = await operator.post<Created>("/threads", {
        projectId: lab.projectId,
        threads: [{ prompt: "@@reply narrow", profile: "reviewer", runtimeMode: "approval-required" }],
      });
      expect(narrowed.status, narrowed.text).toBe(201);
      expect(thread(narrowed.body.threads[0]!.thread.threadId).runtimeMode).toBe("approval-required");

      const wider = await operator.post("/threads", {
        projectId: lab.projectId,
        threads: [{ prompt: "@@reply wide", profile: "reviewer", runtimeMode: "full-access" }],
      });
      expect(wider.body).toMatchObject({
        error: { code: "runtime_mode_escalation_denied", details: { field: "runtimeMode", profile: "reviewer" } },
      });
      const unknown = await operator.post("/threads", {
        projectId: lab.projectId,
        threads: [{ prompt: "@@reply x", profile: "reviewr" }],
      });
      expect(unknown.body).toMatchObject({
        error: { code: "invalid_request", details: { profile: "reviewr", availableProfiles: AVAILABLE } },
      });
    });

    it("a token that may not start work is refused as before, profile or not", async () => {
      const reader = apiClientFor(lab, { capabilities: ["orchestration:read"] });
      const withProfile = await reader.post("/threads", {
        projectId: lab.projectId,
        threads: [{ prompt: "@@reply x", profile: "reviewer" }],
      });
      const without = await reader.post("/threads", { projectId: lab.projectId, threads: [{ prompt: "@@reply x" }] });
      expect(withProfile.status).toBe(without.status);
      expect(withProfile.status).toBe(403);
      expect((withProfile.body as { error: { code: string } }).error.code).toBe(
        (without.body as { error: { code: string } }).error.code,
      );
    });

    it("GET /profiles lists the profiles with descriptions and which providers can carry each", async () => {
      const reader = apiClientFor(lab, { capabilities: ["orchestration:read"] });
      const listed = await reader.get<{ profiles: Record<string, unknown>[] }>("/profiles", {
        projectId: lab.projectId,
      });
      expect(listed.status, listed.text).toBe(200);
      expect(listed.body.profiles.map((p) => [p["name"], p["description"]])).toEqual([
        ["reviewer", "Reviews a change and reports findings, most severe first"],
        ["planner", "Plans the work, changes nothing"],
        ["no-shell", "Works without a shell"],
      ]);
      const noShell = listed.body.profiles.find((p) => p["name"] === "no-shell")!;
      expect(noShell["providers"]).toEqual([
        { providerInstanceId: "alpha", available: true, canCarry: true },
        { providerInstanceId: "beta", available: true, canCarry: true },
        expect.objectContaining({ providerInstanceId: "bare", canCarry: false, capability: "tools.rules.deny" }),
      ]);
      // A profile with a target could run only there.
      const reviewer = listed.body.profiles.find((p) => p["name"] === "reviewer")!;
      expect(reviewer["providers"]).toEqual([{ providerInstanceId: "beta", available: true, canCarry: true }]);
    });
  });

  it("orchestrator_capabilities says which providers can carry each profile", async () => {
    const parent = await lab.liveAgent({ instance: "alpha" });
    const caps = await mustCall<{
      profiles: { name: string; providers: { providerInstanceId: string; canCarry: boolean }[] }[];
    }>(parent.client, "orchestrator_capabilities", {});
    const noShell = caps.profiles.find((p) => p.name === "no-shell")!;
    expect(noShell.providers.map((p) => [p.providerInstanceId, p.canCarry])).toEqual([
      ["alpha", true],
      ["beta", true],
      ["bare", false],
    ]);
    parent.release();
  });
});
