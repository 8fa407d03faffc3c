import { describe, expect, it } from "vitest";
import { threadShell } from "./thread-fixture.js";
import type {
  ProfileSummary,
  ProviderDoctor,
  ProviderFinding,
  ProviderSummary,
  SessionView,
  ThreadShell,
} from "../../src/api/types.js";
import { findingLabel, firstHourSteps, providerConfigSnippet } from "../../src/model/first-hour.js";
import {
  createThreadsBody,
  defaultInteractionMode,
  defaultProvider,
  defaultRuntimeMode,
  effortChoices,
  interactionModeChoices,
  profileMismatch,
  providerForProfile,
  runtimeModeChoices,
  startableProjects,
} from "../../src/model/new-thread.js";
import { threadActions } from "../../src/model/thread-actions.js";

function provider(overrides: Partial<ProviderSummary> = {}): ProviderSummary {
  return {
    providerInstanceId: "alpha",
    driverKind: "scripted",
    displayName: "alpha",
    canRunChildTasks: true,
    constraints: [],
    models: [{ id: "alpha-large", efforts: ["low", "medium", "high"], defaultEffort: "medium" }, { id: "alpha-small" }],
    omittedModels: 0,
    interactionModes: ["plan", "default"],
    steering: "native",
    fork: "native",
    interrupt: "running_turns",
    ...overrides,
  };
}

const session = (ceiling: SessionView["ceiling"]): SessionView => ({
  verbs: ["read", "operate"],
  projects: "*",
  ceiling,
  expiresAt: null,
});

describe("the New thread composer's choices", () => {
  it("offers a provider's runtime modes, allowing only those within the session's ceiling, and preselects the most careful", () => {
    const capped = runtimeModeChoices(
      provider(),
      session({ runtimeMode: "approval-required", interactionMode: "default" }),
    );
    expect(capped.map((choice) => [choice.mode, choice.allowed])).toEqual([
      ["approval-required", true],
      ["auto-accept-edits", false],
      ["full-access", false],
    ]);
    expect(capped[2]!.why).toBe("above this session's runtime ceiling, approval-required");
    expect(defaultRuntimeMode(capped)).toBe("approval-required");
    // No ceiling: every mode; a provider that lists its modes offers only those.
    const open = runtimeModeChoices(provider({ runtimeModes: ["auto-accept-edits", "full-access"] }), session(null));
    expect(open.map((choice) => [choice.mode, choice.allowed])).toEqual([
      ["auto-accept-edits", true],
      ["full-access", true],
    ]);
    expect(defaultRuntimeMode(open)).toBe("auto-accept-edits");
    // A provider whose every mode is above the ceiling leaves nothing to choose.
    expect(
      defaultRuntimeMode(
        runtimeModeChoices(
          provider({ runtimeModes: ["full-access"] }),
          session({ runtimeMode: "auto-accept-edits", interactionMode: "default" }),
        ),
      ),
    ).toBeNull();
  });

  it("preselects the default interaction mode unless the ceiling is plan", () => {
    expect(defaultInteractionMode(interactionModeChoices(provider(), session(null)))).toBe("default");
    const planOnly = interactionModeChoices(
      provider(),
      session({ runtimeMode: "full-access", interactionMode: "plan" }),
    );
    expect(planOnly.map((choice) => [choice.mode, choice.allowed])).toEqual([
      ["plan", true],
      ["default", false],
    ]);
    expect(defaultInteractionMode(planOnly)).toBe("plan");
  });

  it("picks the first provider that can run work, a model's efforts with its default, and leaves Scratch out of the projects", () => {
    const broken = provider({ providerInstanceId: "delta", canRunChildTasks: false });
    expect(defaultProvider([broken, provider()])?.providerInstanceId).toBe("alpha");
    expect(defaultProvider([broken])?.providerInstanceId).toBe("delta");
    expect(defaultProvider([])).toBeNull();
    expect(effortChoices(provider().models[0]!)).toEqual({ efforts: ["low", "medium", "high"], preselected: "medium" });
    expect(effortChoices(provider().models[1]!)).toEqual({ efforts: [], preselected: null });
    expect(effortChoices({ id: "m", efforts: ["a"], defaultEffort: "z" })).toEqual({
      efforts: ["a"],
      preselected: null,
    });
    expect(
      startableProjects([
        { projectId: "project_scratch", name: "Scratch", rootPath: "/s", scratch: true, threadCount: 0 },
        { projectId: "p", name: "app", rootPath: "/app", scratch: false, threadCount: 0 },
      ]).map((project) => project.projectId),
    ).toEqual(["p"]);
  });

  it("builds create_threads' body: the provider's defaults are left to it, an empty title is none", () => {
    const draft = {
      projectId: "p",
      providerInstanceId: "alpha",
      model: null,
      effort: null,
      runtimeMode: "approval-required",
      interactionMode: "default",
      title: "  ",
      prompt: "do it",
    } as const;
    expect(createThreadsBody(draft, "ui-1")).toEqual({
      projectId: "p",
      clientRequestId: "ui-1",
      threads: [
        {
          prompt: "do it",
          target: { providerInstanceId: "alpha" },
          runtimeMode: "approval-required",
          interactionMode: "default",
        },
      ],
    });
    expect(
      createThreadsBody({ ...draft, model: "alpha-large", effort: "high", title: " Plan " }, "ui-2").threads[0],
    ).toMatchObject({ title: "Plan", target: { model: "alpha-large", effort: "high" } });
  });
});

function shell(overrides: Partial<ThreadShell> = {}): ThreadShell {
  return threadShell({ model: null, runtimeMode: "full-access", status: "completed", latestRunId: "r", ...overrides });
}

const enabled = (actions: ReturnType<typeof threadActions>) =>
  Object.entries(actions)
    .filter(([, state]) => state.enabled)
    .map(([name]) => name);

describe("a thread's actions, enabled by its state", () => {
  it("offers Interrupt and Stop on a running thread, never Resume or Settle", () => {
    const running = threadActions(shell({ status: "running" }), 0);
    expect(enabled(running)).toEqual(["interrupt", "stop"]);
    expect(running.resume.why).toBe("It is running: Resume is for a stopped thread.");
    expect(enabled(threadActions(shell({ status: "waiting" }), 1))).toEqual(["interrupt", "stop"]);
  });

  it("offers only Settle on a finished thread, and Stop for queued work", () => {
    const finished = threadActions(shell(), 0);
    expect(enabled(finished)).toEqual(["settle"]);
    expect(finished.stop.why).toBe("Nothing is running or queued.");
    expect(enabled(threadActions(shell({ status: "idle", latestRunId: null }), 0))).toEqual(["settle"]);
    expect(enabled(threadActions(shell({ queuedRuns: 2 }), 0))).toEqual(["stop"]);
    expect(threadActions(shell(), 1).settle.why).toBe("A question or approval is waiting.");
  });

  it("offers Resume only on a stopped thread, and Revive only on a settled one", () => {
    const stopped = threadActions(shell({ status: "interrupted", stopped: true, queuedRuns: 1 }), 0);
    expect(enabled(stopped)).toEqual(["resume"]);
    expect(stopped.stop.why).toBe("Stopped already: Resume starts its held runs.");
    expect(enabled(threadActions(shell({ settledAt: "2026-12-01T11:00:00.000Z" }), 0))).toEqual(["revive"]);
  });
});

function finding(overrides: Partial<ProviderFinding> = {}): ProviderFinding {
  return {
    providerInstanceId: "alpha",
    driverKind: "scripted",
    displayName: "alpha",
    status: "ok",
    detail: "",
    canRunWork: true,
    checking: false,
    enabled: true,
    problem: null,
    install: null,
    version: null,
    authenticated: true,
    mcp: "http",
    warnings: [],
    checkedAt: null,
    ...overrides,
  };
}

describe("the first hour", () => {
  it("says which steps are done: a project that is not Scratch, a provider that can run work, a thread", () => {
    const doctor = (ready: boolean): ProviderDoctor => ({
      configFile: "/h/config.json",
      drivers: ["codex"],
      ready,
      providers: [],
    });
    const scratch = { projectId: "project_scratch", name: "Scratch", rootPath: "/s", scratch: true, threadCount: 0 };
    expect(firstHourSteps([scratch], null, 0)).toEqual({ project: false, provider: null, thread: false });
    expect(firstHourSteps([scratch, { ...scratch, projectId: "p", scratch: false }], doctor(false), 0)).toEqual({
      project: true,
      provider: false,
      thread: false,
    });
    expect(firstHourSteps([], doctor(true), 3)).toEqual({ project: false, provider: true, thread: true });
  });

  it("labels doctor's findings in words, and writes the config that adds an instance under an id not taken", () => {
    expect(findingLabel(finding())).toBe("ready");
    expect(findingLabel(finding({ status: "warn" }))).toBe("ready, with a warning");
    expect(findingLabel(finding({ canRunWork: false, status: "fail" }))).toBe("needs setup");
    expect(findingLabel(finding({ canRunWork: false, enabled: false, status: "info" }))).toBe("disabled");
    expect(findingLabel(finding({ canRunWork: false, checking: true }))).toBe("checking");
    expect(JSON.parse(providerConfigSnippet("codex", ["alpha"]))).toEqual({
      providers: [{ id: "codex", driver: "codex" }],
    });
    expect(JSON.parse(providerConfigSnippet("codex", ["codex", "codex-2"]))).toEqual({
      providers: [{ id: "codex-3", driver: "codex" }],
    });
  });
});

describe("the composer's profile picker", () => {
  const reviewer: ProfileSummary = {
    name: "reviewer",
    description: "Reviews a change",
    source: "switchyard",
    target: { providerInstanceId: "beta" },
    maxRuntimeMode: "auto-accept-edits",
    maxInteractionMode: "plan",
    providers: [{ providerInstanceId: "beta", available: true, canCarry: true }],
  };
  const noShell: ProfileSummary = {
    name: "no-shell",
    description: "Works without a shell",
    source: "config",
    providers: [
      {
        providerInstanceId: "alpha",
        available: true,
        canCarry: false,
        capability: "tools.rules.deny",
        reason: "alpha cannot enforce deny rules.",
      },
      { providerInstanceId: "beta", available: true, canCarry: true },
    ],
  };
  const full = session({ runtimeMode: "full-access", interactionMode: "default" });

  it("holds the modes to the profile's ceiling as well as the session's, saying which", () => {
    const runtime = runtimeModeChoices(provider(), full, reviewer);
    expect(runtime.map((choice) => [choice.mode, choice.allowed])).toEqual([
      ["approval-required", true],
      ["auto-accept-edits", true],
      ["full-access", false],
    ]);
    expect(runtime[2]!.why).toBe("above profile reviewer's ceiling, auto-accept-edits");
    expect(defaultInteractionMode(interactionModeChoices(provider(), full, reviewer))).toBe("plan");
  });

  it("starts on a provider that can carry the profile, and says why another cannot", () => {
    const alpha = provider();
    const beta = provider({ providerInstanceId: "beta" });
    expect(providerForProfile(reviewer, [alpha, beta])?.providerInstanceId).toBe("beta");
    expect(providerForProfile(noShell, [alpha, beta])?.providerInstanceId).toBe("beta");
    expect(providerForProfile(null, [alpha, beta])?.providerInstanceId).toBe("alpha");
    expect(profileMismatch(noShell, alpha)).toBe("alpha cannot enforce deny rules.");
    expect(profileMismatch(reviewer, alpha)).toBe("profile reviewer runs on beta");
    expect(profileMismatch(reviewer, beta)).toBeNull();
  });

  it("sends the profile with the thread", () => {
    const body = createThreadsBody(
      {
        projectId: "p",
        providerInstanceId: "beta",
        model: null,
        effort: null,
        runtimeMode: "approval-required",
        interactionMode: "plan",
        title: "",
        prompt: "review",
        profile: "reviewer",
      },
      "key",
    );
    expect(body.threads[0]).toMatchObject({ profile: "reviewer", prompt: "review" });
  });
});
