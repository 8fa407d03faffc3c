import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpLab } from "../support/mcp-lab.js";
import { callTool, mustCall } from "../support/mcp-client.js";
import { scriptedInstance } from "../support/test-host.js";
import type { DelegateTaskResult } from "../../src/services/delegation/task-view.js";
import { ROLE_INSTRUCTIONS } from "../../src/services/delegation/role-instructions.js";

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

describe("delegate_task profile (real endpoint, engine, SQLite; scripted providers; project and config profiles)", () => {
  let lab: McpLab;
  let reviewerFile: string;
  beforeAll(async () => {
    lab = await McpLab.start({
      providers: ({ home, gateDir }) => [
        scriptedInstance("alpha", { gateDir, stateDir: `${home}/scripted-state`, models: ["alpha-large"] }),
        scriptedInstance("beta", {
          gateDir,
          stateDir: `${home}/scripted-state`,
          models: ["beta-1", "beta-2"],
          modelEfforts: { "beta-2": ["low", "high"] },
        }),
      ],
      profiles: [
        {
          name: "planner",
          description: "Plans the work, changes nothing",
          maxInteractionMode: "plan",
          instructions: "Only plan.",
        },
      ],
    });
    const root = lab.t.workspace;
    mkdirSync(join(root, ".switchyard", "agents"), { recursive: true });
    reviewerFile = join(root, ".switchyard", "agents", "reviewer.md");
    writeFileSync(reviewerFile, REVIEWER);
    mkdirSync(join(root, ".claude", "agents"), { recursive: true });
    writeFileSync(
      join(root, ".claude", "agents", "explorer.md"),
      "---\nname: explorer\ndescription: Explores the code read-only\ntools: Read, Grep\npermissionMode: plan\n---\nExplore and report what you find.\n",
    );
    writeFileSync(
      join(root, "opencode.json"),
      JSON.stringify({
        agent: {
          docs: {
            description: "Writes documentation",
            mode: "subagent",
            prompt: "Write the docs.",
            permission: { bash: "deny" },
          },
        },
      }),
    );
  });
  afterAll(async () => lab.stop());

  const delegate = (client: Parameters<typeof callTool>[0], args: Record<string, unknown>) =>
    callTool<DelegateTaskResult>(client, "delegate_task", { mode: "wait", ...args });
  const childOf = (result: DelegateTaskResult) => lab.host.store.get("thread", result.childThreadId)!;
  const instructionsOf = (result: DelegateTaskResult) =>
    lab.host.store.select("attempt", "thread_id = ?", [result.childThreadId])[0]!.instructions;

  it("orchestrator_capabilities lists the profiles with their descriptions and sources", async () => {
    const parent = await lab.liveAgent({ instance: "alpha" });
    const caps = await mustCall<{ profiles: { name: string; description: string; source: string }[] }>(
      parent.client,
      "orchestrator_capabilities",
      {},
    );
    expect(caps.profiles.map((p) => [p.name, p.source, p.description])).toEqual([
      ["reviewer", "switchyard", "Reviews a change and reports findings, most severe first"],
      ["planner", "config", "Plans the work, changes nothing"],
      ["explorer", "claude", "Explores the code read-only"],
      ["docs", "opencode", "Writes documentation"],
    ]);
    expect(caps.profiles[0]).toMatchObject({
      target: { providerInstanceId: "beta", model: "beta-2", effort: "high" },
      maxRuntimeMode: "auto-accept-edits",
    });
    parent.release();
  });

  it("a project profile selects provider, model, effort, mode ceiling and instructions; the child records it", async () => {
    const parent = await lab.liveAgent({ instance: "alpha", runtimeMode: "full-access" });
    const outcome = await delegate(parent.client, { task: "@@reply reviewed", profile: "reviewer" });
    expect(outcome.ok).toBe(true);
    const result = (outcome as { value: DelegateTaskResult }).value;
    expect(result).toMatchObject({
      status: "completed",
      summary: "reviewed",
      providerInstanceId: "beta",
      model: "beta-2",
    });
    const child = childOf(result);
    expect(child).toMatchObject({ effort: "high", runtimeMode: "auto-accept-edits", interactionMode: "default" });
    expect(child.profile).toEqual({
      name: "reviewer",
      source: "switchyard",
      file: reviewerFile,
      version: versionOf(readFileSync(reviewerFile, "utf8")),
    });
    expect(instructionsOf(result)).toBe("Review the change. Report findings, most severe first.");
    // Readers see it on the thread.
    const read = await mustCall<{ thread: { profile?: unknown } }>(parent.client, "t3_thread_read", {
      threadId: result.childThreadId,
    });
    expect(read.thread.profile).toEqual(child.profile);
    const item = lab.host.store.select("item", "thread_id = ? AND kind = 'subagent'", [parent.threadId])[0]!;
    expect(item.data).toMatchObject({ profile: "reviewer" });
    // A role adds its instruction after the profile's.
    const withRole = await delegate(parent.client, { task: "@@reply again", profile: "reviewer", role: "review" });
    expect(instructionsOf((withRole as { value: DelegateTaskResult }).value)).toBe(
      `Review the change. Report findings, most severe first.\n\n${ROLE_INSTRUCTIONS.review}`,
    );
    parent.release();
  });

  it("explicit fields narrow the profile and are refused, naming the field, when they would widen or replace it", async () => {
    const parent = await lab.liveAgent({ instance: "alpha", runtimeMode: "full-access" });
    const narrowed = await delegate(parent.client, {
      task: "@@reply narrow",
      profile: "reviewer",
      runtimeMode: "approval-required",
    });
    expect(childOf((narrowed as { value: DelegateTaskResult }).value).runtimeMode).toBe("approval-required");

    const wider = await delegate(parent.client, {
      task: "@@reply wide",
      profile: "reviewer",
      runtimeMode: "full-access",
    });
    expect(wider).toMatchObject({
      ok: false,
      code: "runtime_mode_escalation_denied",
      details: { field: "runtimeMode", profile: "reviewer", limit: "auto-accept-edits" },
    });
    const otherModel = await delegate(parent.client, {
      task: "@@reply other",
      profile: "reviewer",
      target: { model: "beta-1" },
    });
    expect(otherModel).toMatchObject({
      ok: false,
      code: "invalid_request",
      details: { field: "target.model", profile: "reviewer", profileValue: "beta-2" },
    });
    const planner = await delegate(parent.client, {
      task: "@@reply plan",
      profile: "planner",
      interactionMode: "default",
    });
    expect(planner).toMatchObject({
      ok: false,
      code: "interaction_mode_escalation_denied",
      details: { field: "interactionMode", profile: "planner" },
    });
    const planned = await delegate(parent.client, { task: "@@reply planned", profile: "planner" });
    const plannedChild = childOf((planned as { value: DelegateTaskResult }).value);
    expect(plannedChild).toMatchObject({ interactionMode: "plan", providerInstanceId: "alpha" });
    expect(plannedChild.profile).toMatchObject({ name: "planner", source: "config" });
    parent.release();
  });

  it("a profile never widens the caller: a plan-mode caller's child stays in plan under a broader profile", async () => {
    const parent = await lab.liveAgent({
      instance: "alpha",
      runtimeMode: "approval-required",
      interactionMode: "plan",
    });
    const result = await delegate(parent.client, { task: "@@reply still narrow", profile: "reviewer" });
    expect(childOf((result as { value: DelegateTaskResult }).value)).toMatchObject({
      runtimeMode: "approval-required",
      interactionMode: "plan",
    });
    parent.release();
  });

  it("a Claude Code agent and an OpenCode agent are converted and used", async () => {
    const parent = await lab.liveAgent({ instance: "alpha" });
    const explored = (await delegate(parent.client, { task: "@@reply explored", profile: "explorer" })) as {
      value: DelegateTaskResult;
    };
    expect(childOf(explored.value)).toMatchObject({
      providerInstanceId: "alpha",
      interactionMode: "plan",
      profile: { name: "explorer", source: "claude" },
    });
    expect(instructionsOf(explored.value)).toBe("Explore and report what you find.");
    const documented = (await delegate(parent.client, { task: "@@reply documented", profile: "docs" })) as {
      value: DelegateTaskResult;
    };
    expect(childOf(documented.value).profile).toMatchObject({ name: "docs", source: "opencode" });
    expect(instructionsOf(documented.value)).toBe("Write the docs.");
    parent.release();
  });

  it("an unknown profile is a typed failure naming the available ones; an edited file is a new version", async () => {
    const parent = await lab.liveAgent({ instance: "alpha" });
    const unknown = await delegate(parent.client, { task: "@@reply nope", profile: "reviewr" });
    expect(unknown).toMatchObject({
      ok: false,
      code: "invalid_request",
      details: { profile: "reviewr", availableProfiles: ["reviewer", "planner", "explorer", "docs"] },
    });
    expect((unknown as { message: string }).message).toContain('"reviewer"');
    const edited = REVIEWER.replace("most severe first.", "most severe first, with file and line.");
    writeFileSync(reviewerFile, edited);
    const after = (await delegate(parent.client, { task: "@@reply edited", profile: "reviewer" })) as {
      value: DelegateTaskResult;
    };
    expect(childOf(after.value).profile!.version).toBe(versionOf(edited));
    expect(instructionsOf(after.value)).toContain("with file and line");
    writeFileSync(reviewerFile, REVIEWER);
    parent.release();
  });
});
