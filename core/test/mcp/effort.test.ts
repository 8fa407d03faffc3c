import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpLab } from "../support/mcp-lab.js";
import { scriptedInstance } from "../support/test-host.js";
import { ApiClient, ok, type FailureBody } from "../support/api-client.js";
import { callTool, mustCall } from "../support/mcp-client.js";

type Capabilities = {
  inheritedProvider: { effort: string | null } | null;
  providers: { providerInstanceId: string; models: { id: string; efforts?: string[]; defaultEffort?: string }[] }[];
};

/**
 * Seed 003's "chosen provider, model and effort": an optional effort beside the model, checked
 * against the efforts the model lists (capability data from the provider's catalog), stored on
 * the thread and each run, and handed to the provider with every turn (the scripted model
 * answers `@@effort` with the effort its turn input carried).
 */
describe("effort per thread and run", () => {
  let lab: McpLab;
  beforeAll(async () => {
    lab = await McpLab.start({
      providers: ({ home, gateDir }) => [
        scriptedInstance("alpha", {
          gateDir,
          stateDir: `${home}/scripted-state`,
          models: ["alpha-large", "alpha-small"],
          modelEfforts: { "alpha-large": ["low", "medium", "high"] },
        }),
        scriptedInstance("beta", {
          gateDir,
          stateDir: `${home}/scripted-state`,
          models: ["beta-1"],
          modelEfforts: { "beta-1": ["off", "minimal", "xhigh"] },
        }),
      ],
    });
  });
  afterAll(async () => lab.stop());

  const answer = async (threadId: string) =>
    (await lab.host.threads.waitForRun({ threadId, timeoutMs: 10_000 })).run!.summary;

  it("lists each model's efforts in orchestrator_capabilities", async () => {
    const client = await lab.client(["orchestration:read"]);
    const described = await mustCall<Capabilities>(client, "orchestrator_capabilities", {});
    const alpha = described.providers.find((p) => p.providerInstanceId === "alpha")!;
    expect(alpha.models).toEqual([
      { id: "alpha-large", efforts: ["low", "medium", "high"], defaultEffort: "low" },
      { id: "alpha-small" },
    ]);
    expect(described.providers.find((p) => p.providerInstanceId === "beta")!.models[0]).toMatchObject({
      id: "beta-1",
      efforts: ["off", "minimal", "xhigh"],
    });
  });

  it("create_threads, delegate_task and t3_thread_launch pass the effort to the provider; children inherit it with the model", async () => {
    const client = await lab.client();
    const created = await mustCall<{ threads: { thread: { threadId: string; effort: string | null } }[] }>(
      client,
      "create_threads",
      {
        projectId: lab.projectId,
        threads: [
          {
            prompt: "@@gate effort-parent @@reply parent",
            target: { providerInstanceId: "alpha", model: "alpha-large", effort: "high" },
            runtimeMode: "full-access",
          },
          { prompt: "@@effort", target: { providerInstanceId: "beta", effort: "xhigh" } },
          { prompt: "@@effort", target: { providerInstanceId: "alpha", model: "alpha-large" } },
        ],
      },
    );
    const [parent, beta, plain] = created.threads.map((entry) => entry.thread);
    expect(parent!.effort).toBe("high");
    expect(await answer(beta!.threadId)).toBe("effort: xhigh");
    expect(lab.host.store.select("run", "thread_id = ?", [beta!.threadId])[0]!.effort).toBe("xhigh");
    // Without an effort the provider's default applies: the turn carries none.
    expect(plain!.effort).toBeNull();
    expect(await answer(plain!.threadId)).toBe("effort: default");

    await lab.waitForLiveTurn(parent!.threadId);
    const agent = await lab.agent(parent!.threadId);
    const described = await mustCall<Capabilities>(agent, "orchestrator_capabilities", {});
    expect(described.inheritedProvider?.effort).toBe("high");
    // Same provider and model: the effort is inherited; another provider's default otherwise.
    const inherited = await mustCall<{ childThreadId: string; summary: string }>(agent, "delegate_task", {
      task: "@@effort",
      mode: "wait",
    });
    expect(inherited.summary).toBe("effort: high");
    const chosen = await mustCall<{ summary: string }>(agent, "delegate_task", {
      task: "@@effort",
      target: { effort: "low" },
      mode: "wait",
    });
    expect(chosen.summary).toBe("effort: low");
    const other = await mustCall<{ summary: string }>(agent, "delegate_task", {
      task: "@@effort",
      target: { providerInstanceId: "beta" },
      mode: "wait",
    });
    expect(other.summary).toBe("effort: default");
    const launched = await mustCall<{ thread: { threadId: string; effort: string | null } }>(
      agent,
      "t3_thread_launch",
      { message: "@@effort", target: { effort: "medium" } },
    );
    expect(launched.thread.effort).toBe("medium");
    expect(await answer(launched.thread.threadId)).toBe("effort: medium");
    // A later message in the same thread runs with the thread's effort too.
    const next = await mustCall<{ runId: string }>(client, "t3_thread_send", {
      threadId: launched.thread.threadId,
      message: "@@effort",
    });
    expect(
      (await lab.host.threads.waitForRun({ threadId: launched.thread.threadId, runId: next.runId, timeoutMs: 10_000 }))
        .run!.summary,
    ).toBe("effort: medium");
    lab.release("effort-parent");
  });

  it("refuses an effort the model does not list, naming the ones it does", async () => {
    const client = await lab.client();
    const wrong = await callTool(client, "create_threads", {
      projectId: lab.projectId,
      threads: [{ prompt: "x", target: { providerInstanceId: "alpha", model: "alpha-large", effort: "max" } }],
    });
    expect(wrong).toMatchObject({
      ok: false,
      code: "invalid_request",
      message: expect.stringContaining('supports effort "low", "medium", "high", not "max"'),
      details: {
        providerInstanceId: "alpha",
        model: "alpha-large",
        effort: "max",
        supportedEfforts: ["low", "medium", "high"],
      },
    });
    const none = await callTool(client, "create_threads", {
      projectId: lab.projectId,
      threads: [{ prompt: "x", target: { providerInstanceId: "alpha", model: "alpha-small", effort: "high" } }],
    });
    expect(none).toMatchObject({
      ok: false,
      code: "invalid_request",
      message: expect.stringContaining("takes no effort setting"),
      details: { supportedEfforts: [] },
    });
    expect(
      lab.host.store
        .select("thread", "project_id = ?", [lab.projectId])
        .some((thread) => thread.model === "alpha-small"),
    ).toBe(false);

    // The API takes the same field, with the same refusal.
    const token = lab.registry.issueClientToken({ ttlMs: 60_000, capabilities: ["orchestration:operate"] }).token;
    const api = new ApiClient(lab.server.apiUrl, token);
    const refused = await api.post("/threads", {
      projectId: lab.projectId,
      threads: [{ target: { providerInstanceId: "beta", effort: "high" } }],
    });
    expect([
      refused.status,
      (refused.body as FailureBody).error.code,
      (refused.body as FailureBody).error.details.supportedEfforts,
    ]).toEqual([400, "invalid_request", ["off", "minimal", "xhigh"]]);
    const made = await ok(
      api.post("/threads", {
        projectId: lab.projectId,
        threads: [{ prompt: "@@effort", target: { providerInstanceId: "beta", effort: "minimal" } }],
      }),
      201,
    );
    expect(made.threads[0].thread.effort).toBe("minimal");
    expect(await answer(made.threads[0].thread.threadId)).toBe("effort: minimal");
  });
});
