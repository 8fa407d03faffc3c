import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type {
  OrchestrationAdapter,
  ProviderCapabilities,
  ProviderSession,
  RunRecord,
  TimelineItemRecord,
} from "@switchyard/core";
import { startTestHost, type TestHost } from "../test-host/start-test-host.js";

/**
 * Prompts that make the harness under test do something. Each returns the text of a user
 * message; for real harnesses they are scripted-model-server directives, for a scripted
 * provider its own directives.
 */
export interface ConformanceScript {
  /** A prompt whose reply contains `marker`. */
  text(marker: string): string;
  /** A prompt that runs `echo <marker>` with the agent's shell tool and replies with the output. */
  shell?(marker: string): string;
  /** A prompt whose turn keeps running until `release(gate)`, then replies with `marker`. */
  hold(gate: string, marker: string): string;
  /** Lets a held turn go on. */
  release(gate: string): void | Promise<void>;
  /** A prompt that calls the Switchyard MCP tool `tool` with `args` and replies with its output. */
  mcpTool?(tool: string, args: Record<string, unknown>, marker: string): string;
  /** A prompt whose reply contains the earlier user messages of the conversation. */
  recall(marker: string): string;
  /** A prompt that makes the agent ask for approval to run `echo <marker>`, then reply with the output. */
  approval?(marker: string): string;
  /**
   * A prompt whose turn runs a shell command that keeps running (for tens of seconds) before it
   * would reply with `marker`: the suite interrupts the turn inside that tool call.
   */
  holdInTool?(marker: string): string;
  /**
   * How many times `needle` appears in everything the model received for the newest model call
   * that contains it (system prompt, developer messages and user text together), or null when
   * the harness cannot tell. Proves instructions reach the model exactly once.
   */
  countInModelInput?(needle: string): number | null;
}

/** What a plugin's setup returns: the instance config and its prompts. */
export interface ConformanceSetup {
  readonly instance: {
    readonly options?: Record<string, unknown>;
    readonly homePath?: string | null;
    readonly environment?: Record<string, string>;
    readonly customModels?: readonly string[];
  };
  readonly script: ConformanceScript;
  teardown?(): Promise<void> | void;
}

/** Options of {@link describeAdapterConformance}. */
export interface AdapterConformanceOptions {
  /** Shown in test names (`codex app-server`). */
  readonly name: string;
  /** The plugin folder (loaded through the plugin host like any plugin). */
  readonly pluginDir: string;
  /** The driver kind under test. */
  readonly driver: string;
  /** Builds the environment (model server, harness home…) once for the suite. */
  setup(): Promise<ConformanceSetup>;
  /** Per-test timeout (default 120 s). */
  readonly timeoutMs?: number;
  /** Other plugin folders the host needs. */
  readonly extraPlugins?: readonly string[];
}

const INSTANCE = "subject";

function marker(label: string): string {
  return `${label}-${randomBytes(3).toString("hex")}`;
}

/**
 * Registers the shared adapter conformance tests for a driver, run against the real harness
 * through a real Switchyard host (plugin host, engine, SQLite, MCP endpoint). A capability the
 * driver declares is exercised; one it declares false must be refused with a typed error.
 */
export function describeAdapterConformance(options: AdapterConformanceOptions): void {
  const timeout = options.timeoutMs ?? 120_000;

  describe(`${options.name}: adapter conformance`, () => {
    let lab: TestHost;
    let setup: ConformanceSetup;
    const capabilities = (): ProviderCapabilities => lab.host.providers.capabilities(INSTANCE);
    const items = (threadId: string): TimelineItemRecord[] =>
      lab.host.store.select("item", "thread_id = ?", [threadId], "ORDER BY position");
    const assistantText = (threadId: string, runId: string): string =>
      items(threadId)
        .filter((item) => item.kind === "assistant_message" && item.runId === runId)
        .map((item) => item.text)
        .join("\n");
    const waitForLiveTurn = async (threadId: string): Promise<void> => {
      const live = await lab.host.waiter.waitFor(
        () =>
          lab.host.store.select("attempt", "thread_id = ? AND status = 'running'", [threadId]).length > 0 ? true : null,
        { timeoutMs: 60_000 },
      );
      if (live === null) throw new Error(`no turn of thread ${threadId} reached the provider`);
    };
    const run = (threadId: string, opts: { runId?: string } = {}): Promise<RunRecord> =>
      lab.waitForRun(threadId, { timeoutMs: timeout - 5_000, ...opts });
    /**
     * The spec's rule at turn.terminal, whatever the provider: nothing of a finished run stays
     * open (tool calls end, requests resolve; text cut off by an interrupt is kept as partial).
     */
    const expectNothingOpen = (threadId: string): void => {
      const open = items(threadId).filter((item) => {
        if (item.status !== "in_progress" && item.status !== "pending") return false;
        const owner = item.runId === null ? null : lab.host.store.get("run", item.runId);
        return owner !== null && ["completed", "failed", "cancelled", "interrupted"].includes(owner.status);
      });
      expect(
        open.map((item) => `${item.kind} ${item.status}: ${item.text}`),
        "items left open after their turn ended",
      ).toEqual([]);
    };

    beforeAll(async () => {
      setup = await options.setup();
      lab = await startTestHost({
        plugins: [options.pluginDir, ...(options.extraPlugins ?? [])],
        providers: [{ id: INSTANCE, driver: options.driver, ...setup.instance }],
      });
    }, timeout);

    afterAll(async () => {
      await lab?.stop();
      await setup?.teardown?.();
    }, timeout);

    it(
      "loads through the plugin host and probes status without a model turn",
      async () => {
        const plugin = lab.host.pluginHost
          .list()
          .find((record) => record.dir !== null && record.drivers.includes(options.driver));
        expect(plugin?.status, plugin?.refusal?.message).toBe("loaded");
        const availability = await lab.host.providers.availability(INSTANCE, { refresh: true });
        expect(availability?.reason ?? null).toBeNull();
        expect(availability?.status?.installed).toBe(true);
        expect(availability?.status?.executable).toBe(true);
        expect(availability?.status?.authenticated).not.toBe(false);
        expect(Array.isArray(availability?.status?.models)).toBe(true);
      },
      timeout,
    );

    it(
      "runs a text turn with streamed text to a terminal status",
      async () => {
        const m = marker("text");
        const threadId = await lab.createThread(INSTANCE, setup.script.text(m), { runtimeMode: "full-access" });
        const done = await run(threadId);
        if (capabilities().turns.terminalStatusQuality === "none") {
          expect(["completed", "interrupted"]).toContain(done.status);
        } else {
          expect(done.status, JSON.stringify(done.error)).toBe("completed");
        }
        expect(assistantText(threadId, done.id)).toContain(m);
        expect(done.summary).toContain(m);
        expectNothingOpen(threadId);
      },
      timeout,
    );

    it(
      "surfaces a shell tool call as a command item (or declares no shell)",
      async () => {
        if (!capabilities().tools.shell || setup.script.shell === undefined) {
          expect(setup.script.shell === undefined || !capabilities().tools.shell).toBe(true);
          return;
        }
        const m = marker("shell");
        const threadId = await lab.createThread(INSTANCE, setup.script.shell(m), { runtimeMode: "full-access" });
        const done = await run(threadId);
        expect(done.status, JSON.stringify(done.error)).toBe("completed");
        const tools = items(threadId).filter((item) => item.kind === "tool_call");
        expect(tools.some((item) => item.data.toolKind === "command")).toBe(true);
        expect(done.summary).toContain(m);
        expectNothingOpen(threadId);
      },
      timeout,
    );

    it(
      "steers a running turn natively, or degrades exactly as the shared policy says",
      async () => {
        const gate = marker("steer-gate");
        const m = marker("steer");
        const threadId = await lab.createThread(INSTANCE, setup.script.hold(gate, m), { runtimeMode: "full-access" });
        await waitForLiveTurn(threadId);
        const turns = capabilities().turns;
        const send = () =>
          lab.host.threads.send({
            threadId,
            text: `steer note ${marker("note")}`,
            mode: "steer",
            createdBy: "user",
            creationSource: "cli",
          });
        if (turns.activeSteering) {
          expect((await send()).delivery).toBe("steered");
          await lab.host.drainEffects();
          await setup.script.release(gate);
          const done = await run(threadId);
          expect(done.status, JSON.stringify(done.error)).toBe("completed");
        } else if (turns.interrupt && turns.steeringByInterruptRestart) {
          const sent = await send();
          expect(sent.delivery).toBe("restarted");
          expect(sent.decision.degraded).toBe(true);
          const done = await run(threadId, { runId: sent.runId });
          await setup.script.release(gate);
          expect(done.status, JSON.stringify(done.error)).toBe("completed");
          const attempts = lab.host.store.select("attempt", "run_id = ?", [done.id]);
          expect(attempts.map((a) => a.status).sort()).toEqual(["completed", "interrupted"]);
        } else {
          await expect(send()).rejects.toThrowError(expect.objectContaining({ code: "thread_not_sendable" }));
          await setup.script.release(gate);
          await run(threadId);
        }
      },
      timeout,
    );

    it(
      "interrupts a running turn, or refuses with a typed error",
      async () => {
        const gate = marker("interrupt-gate");
        const threadId = await lab.createThread(INSTANCE, setup.script.hold(gate, marker("never")), {
          runtimeMode: "full-access",
        });
        await waitForLiveTurn(threadId);
        if (capabilities().turns.interrupt) {
          const result = await lab.host.threads.interrupt({ threadId });
          expect(result.status).toBe("interrupt_requested");
          const done = await run(threadId);
          expect(["interrupted", "cancelled"]).toContain(done.status);
          await setup.script.release(gate);
          expectNothingOpen(threadId);
        } else {
          await expect(lab.host.threads.interrupt({ threadId })).rejects.toThrowError(
            expect.objectContaining({ code: "thread_not_interruptible" }),
          );
          await setup.script.release(gate);
          await run(threadId);
        }
      },
      timeout,
    );

    it(
      "closes a session and resumes it with the conversation intact",
      async () => {
        const first = marker("remember");
        const threadId = await lab.createThread(INSTANCE, setup.script.text(first), { runtimeMode: "full-access" });
        expect((await run(threadId)).status).toBe("completed");
        await lab.host.sessions.close(threadId, "conformance");
        const sent = await lab.host.threads.send({
          threadId,
          text: setup.script.recall(marker("recall")),
          mode: "auto",
          createdBy: "user",
          creationSource: "cli",
        });
        const done = await run(threadId, { runId: sent.runId });
        expect(done.status, JSON.stringify(done.error)).toBe("completed");
        const sessions = lab.host.store.select("providerSession", "thread_id = ?", [threadId]);
        expect(sessions.length).toBe(2);
        if (capabilities().sessions.resume) {
          expect(done.summary).toContain(first);
        }
      },
      timeout,
    );

    it(
      "forks natively, or carries the conversation as portable context",
      async () => {
        const m = marker("fork");
        const source = await lab.createThread(INSTANCE, setup.script.text(m), { runtimeMode: "full-access" });
        expect((await run(source)).status).toBe("completed");
        const fork = await lab.host.forks.fork({ sourceThreadId: source, createdBy: "user", creationSource: "cli" });
        const caps = capabilities();
        const expected = caps.threads.fork && caps.identity.nativeThreadIds === "strong" ? "native" : "portable";
        expect(fork.strategy).toBe(expected);
        const sent = await lab.host.threads.send({
          threadId: fork.thread.id,
          text: setup.script.recall(marker("after-fork")),
          mode: "auto",
          createdBy: "user",
          creationSource: "cli",
        });
        const done = await run(fork.thread.id, { runId: sent.runId });
        expect(done.status, JSON.stringify(done.error)).toBe("completed");
        if (fork.strategy === "native") {
          expect(done.summary).toContain(m);
        } else {
          const attempt = lab.host.store.select("attempt", "run_id = ?", [done.id])[0];
          expect(attempt?.instructions ?? "").toContain(m);
        }
      },
      timeout,
    );

    it(
      "round-trips an approval request where the provider raises them",
      async () => {
        if (!capabilities().runtimeRequests.approvals || setup.script.approval === undefined) {
          expect(setup.script.approval === undefined || !capabilities().runtimeRequests.approvals).toBe(true);
          return;
        }
        const m = marker("approve");
        const threadId = await lab.createThread(INSTANCE, setup.script.approval(m), {
          runtimeMode: "approval-required",
        });
        const request = await lab.host.waiter.waitFor(
          async () => (await lab.host.threads.pendingRequests(threadId)).find((r) => r.kind === "approval") ?? null,
          { timeoutMs: 60_000 },
        );
        expect(request, "no approval request was raised").not.toBeNull();
        expect((await lab.host.threads.runs(threadId, 1))[0]?.status).toBe("waiting");
        await lab.host.threads.respondToRequest(request!.id, { kind: "approval", decision: "accept" });
        const done = await run(threadId);
        expect(done.status, JSON.stringify(done.error)).toBe("completed");
        expect(done.summary).toContain(m);
        expect(lab.host.store.get("runtimeRequest", request!.id)?.status).toBe("answered");
        expectNothingOpen(threadId);
      },
      timeout,
    );

    it(
      "resolves a dismissed approval as cancelled, the same on every provider",
      async () => {
        if (!capabilities().runtimeRequests.approvals || setup.script.approval === undefined) {
          expect(setup.script.approval === undefined || !capabilities().runtimeRequests.approvals).toBe(true);
          return;
        }
        const threadId = await lab.createThread(INSTANCE, setup.script.approval(marker("dismiss")), {
          runtimeMode: "approval-required",
        });
        const request = await lab.host.waiter.waitFor(
          async () => (await lab.host.threads.pendingRequests(threadId)).find((r) => r.kind === "approval") ?? null,
          { timeoutMs: 60_000 },
        );
        expect(request, "no approval request was raised").not.toBeNull();
        await lab.host.threads.respondToRequest(request!.id, { kind: "dismiss" });
        const done = await run(threadId);
        expect(["completed", "failed", "interrupted", "cancelled"]).toContain(done.status);
        const settled = lab.host.store.get("runtimeRequest", request!.id)!;
        expect(settled.status).toBe("cancelled");
        expect(lab.host.store.get("item", settled.itemId)?.status).toBe("cancelled");
        expectNothingOpen(threadId);
      },
      timeout,
    );

    it(
      "interrupts a turn inside a tool call and leaves nothing open",
      async () => {
        if (!capabilities().turns.interrupt || !capabilities().tools.shell || setup.script.holdInTool === undefined) {
          expect(
            setup.script.holdInTool === undefined || !capabilities().turns.interrupt || !capabilities().tools.shell,
          ).toBe(true);
          return;
        }
        const threadId = await lab.createThread(INSTANCE, setup.script.holdInTool(marker("in-tool")), {
          runtimeMode: "full-access",
        });
        const tool = await lab.host.waiter.waitFor(
          () => items(threadId).find((item) => item.kind === "tool_call" && item.status === "in_progress") ?? null,
          { timeoutMs: 60_000 },
        );
        expect(tool, "the turn never started its tool call").not.toBeNull();
        expect((await lab.host.threads.interrupt({ threadId })).status).toBe("interrupt_requested");
        const done = await run(threadId);
        expect(["interrupted", "cancelled"]).toContain(done.status);
        expect(lab.host.store.get("item", tool!.id)?.status).not.toBe("in_progress");
        expectNothingOpen(threadId);
      },
      timeout,
    );

    it(
      "delivers instructions to the model exactly once",
      async () => {
        const note = marker("instruction");
        const m = marker("instructed");
        const { thread } = await lab.host.threads.createThread({
          projectId: lab.projectId,
          providerInstanceId: INSTANCE,
          runtimeMode: "full-access",
          prompt: setup.script.text(m),
          instructions: `Remember the code word ${note}.`,
          createdBy: "user",
          creationSource: "cli",
        });
        const done = await run(thread.id);
        expect(done.status, JSON.stringify(done.error)).toBe("completed");
        const attempt = lab.host.store.select("attempt", "run_id = ?", [done.id])[0]!;
        expect(attempt.instructions).toContain(note);
        const seen = setup.script.countInModelInput?.(note) ?? null;
        if (seen !== null) expect(seen, "times the model saw the instructions").toBe(1);
      },
      timeout,
    );

    it(
      "calls a Switchyard MCP tool with the session's own credential",
      async () => {
        const mcp = capabilities().tools.mcp;
        if (!(mcp.http || mcp.sse || mcp.stdio) || setup.script.mcpTool === undefined) {
          expect(setup.script.mcpTool === undefined || !(mcp.http || mcp.sse || mcp.stdio)).toBe(true);
          return;
        }
        const m = marker("mcp");
        const threadId = await lab.createThread(INSTANCE, setup.script.mcpTool("orchestrator_capabilities", {}, m), {
          runtimeMode: "full-access",
        });
        const done = await run(threadId);
        expect(done.status, JSON.stringify(done.error)).toBe("completed");
        const call = items(threadId).find((item) => item.kind === "tool_call" && item.data.toolKind === "mcp");
        expect(call, "no MCP tool call item").toBeDefined();
        // The tool answers with the caller's inherited provider only for this session's own
        // credential: an outside client would get inheritedProvider null.
        const output = String(call!.data.output ?? "") + (done.summary ?? "");
        expect(output).toContain(`"providerInstanceId":"${INSTANCE}"`);
        expect(output).toContain('"callerKind":"agent"');
      },
      timeout,
    );

    it(
      "offers an optional method only for a declared capability: an undeclared one is absent, or refuses with unsupported_capability",
      async () => {
        const instance = lab.host.providers.get(INSTANCE);
        const adapter = instance!.adapter as OrchestrationAdapter;
        const session: ProviderSession = await adapter.openSession({
          threadId: "conformance-honesty",
          providerSessionId: "conformance-honesty",
          cwd: lab.workspace,
          model: null,
          runtimeMode: "approval-required",
          interactionMode: "default",
          resumeCursor: null,
          mcp: null,
          emit: () => undefined,
        });
        try {
          // Read after the open, as the host decodes it: a session may negotiate more (ACP).
          const caps = capabilities();
          const checks: { capability: string; declared: boolean; method: unknown; call: () => Promise<unknown> }[] = [
            {
              capability: "turns.activeSteering",
              declared: caps.turns.activeSteering,
              method: session.steerTurn,
              call: () => session.steerTurn!({ turnId: "none", text: "x" }),
            },
            {
              capability: "turns.interrupt",
              declared: caps.turns.interrupt,
              method: session.interruptTurn,
              call: () => session.interruptTurn!({ turnId: "none" }),
            },
            {
              capability: "threads.fork",
              declared: caps.threads.fork,
              method: session.forkThread,
              call: () => session.forkThread!({}),
            },
            {
              capability: "threads.readSnapshot",
              declared: caps.threads.readSnapshot,
              method: session.readSnapshot,
              call: () => session.readSnapshot!(),
            },
            {
              capability: "runtimeRequests.*",
              declared: caps.runtimeRequests.approvals || caps.runtimeRequests.userInputQuestions,
              method: session.respondToRuntimeRequest,
              call: () => session.respondToRuntimeRequest!("none", { kind: "approval", decision: "accept" }),
            },
            {
              capability: "tools.mcpGrantUpdate",
              declared: caps.tools.mcpGrantUpdate,
              method: session.updateMcpGrant,
              call: () =>
                session.updateMcpGrant!({
                  serverName: "switchyard",
                  url: "http://127.0.0.1:9/mcp",
                  token: "sy_conformance",
                  toolTimeoutMs: 1_000,
                  blockingToolNames: [],
                  instructions: "",
                  stdioBridge: { command: "true", args: [], env: {} },
                }),
            },
          ];
          for (const { capability, declared, method, call } of checks) {
            if (declared) {
              expect(typeof method, `${capability} is declared, so the session must offer its method`).toBe("function");
              continue;
            }
            // Absent is the plain way to say "cannot"; a method that is there must refuse, typed.
            if (method === undefined) continue;
            await expect(call(), `${capability} is not declared`).rejects.toMatchObject({
              code: "unsupported_capability",
            });
          }
          if (!caps.threads.forkFromTurn && caps.threads.fork && session.forkThread !== undefined) {
            await expect(session.forkThread({ afterTurnId: "none" })).rejects.toMatchObject({
              code: "unsupported_capability",
            });
          }
        } finally {
          await session.close();
        }
      },
      timeout,
    );
  });
}
