import { describe, expect, it } from "vitest";
import { decodeCapabilities, NO_CAPABILITIES, RUNTIME_MODES, type ProviderCapabilities } from "../src/spec/index.js";
import {
  decideFork,
  decideMessageDispatch,
  decideNativeSubagentStop,
  decideRunStop,
  decideSessionContinuation,
  decideTaskCancel,
  describeProviderConduct,
  resolveModes,
  type SendMode,
} from "../src/policy/index.js";
import { TERMINAL_RUN_STATUSES, type RunStatus } from "../src/store/records.js";

function caps(
  turns: Partial<ProviderCapabilities["turns"]>,
  extra: Record<string, unknown> = {},
): ProviderCapabilities {
  return decodeCapabilities({ turns: { terminalStatusQuality: "strong", ...turns }, ...extra }).capabilities;
}

const MODES: SendMode[] = ["auto", "queue", "steer", "restart"];
const QUALITIES = ["strong", "weak", "none"] as const;

describe("message dispatch policy: every capability combination", () => {
  // All 16 combinations of the four turn booleans, three terminal qualities, every active-run
  // shape (also a maintenance turn), a sender's message or a notification, and every mode.
  const combos: {
    activeSteering: boolean;
    interrupt: boolean;
    steeringByInterruptRestart: boolean;
    queuedMessages: boolean;
    terminalStatusQuality: (typeof QUALITIES)[number];
  }[] = [];
  for (const activeSteering of [false, true])
    for (const interrupt of [false, true])
      for (const steeringByInterruptRestart of [false, true])
        for (const queuedMessages of [false, true])
          for (const terminalStatusQuality of QUALITIES)
            combos.push({
              activeSteering,
              interrupt,
              steeringByInterruptRestart,
              queuedMessages,
              terminalStatusQuality,
            });
  const runs: ({ status: RunStatus; providerTurnLive: boolean; interruptRequested: boolean; text: string } | null)[] = [
    null,
    { status: "starting", providerTurnLive: false, interruptRequested: false, text: "work" },
    { status: "running", providerTurnLive: true, interruptRequested: false, text: "work" },
    { status: "waiting", providerTurnLive: true, interruptRequested: false, text: "work" },
    { status: "running", providerTurnLive: true, interruptRequested: true, text: "work" },
    { status: "running", providerTurnLive: true, interruptRequested: false, text: "/compact" },
  ];

  it("decides every case by the documented rules, and reports what was asked and whether it degraded", () => {
    let cases = 0;
    for (const combo of combos) {
      const capabilities = decodeCapabilities({ turns: combo }).capabilities;
      const restartable = combo.interrupt && combo.steeringByInterruptRestart;
      const canQueue = combo.terminalStatusQuality !== "none";
      for (const activeRun of runs) {
        for (const notification of [false, true]) {
          for (const requested of MODES) {
            cases += 1;
            const decision = decideMessageDispatch({ requested, activeRun, capabilities, text: "hello", notification });
            expect(decision.asked).toBe(requested);
            // A fully active turn: live at the provider, not stopping, not a maintenance command.
            const steerable =
              activeRun !== null &&
              activeRun.providerTurnLive &&
              !activeRun.interruptRequested &&
              activeRun.text !== "/compact";
            let expected: string;
            if (activeRun === null) expected = requested === "steer" || requested === "restart" ? "refused" : "start";
            else if (requested === "queue") expected = canQueue ? "queue" : "refused";
            else if (requested === "auto") {
              if (steerable && combo.activeSteering) expected = "steer";
              else if (steerable && restartable && !notification) expected = "restart";
              else expected = canQueue ? "queue" : "refused";
            } else if (!steerable) expected = "refused";
            else if (requested === "steer")
              expected = combo.activeSteering ? "steer" : restartable ? "restart" : "refused";
            else
              expected = restartable
                ? "restart"
                : combo.interrupt && canQueue
                  ? "interrupt_then_queue_first"
                  : "refused";
            const label = JSON.stringify({ combo, activeRun, requested, notification });
            expect(decision.ok ? decision.action : "refused", label).toBe(expected);
            if (decision.ok) {
              // Degraded: less than the mode promises. auto promises to steer a fully active turn.
              const degraded =
                (requested === "steer" && decision.action === "restart") ||
                (requested === "restart" && decision.action === "interrupt_then_queue_first") ||
                (requested === "auto" && steerable && (decision.action === "restart" || decision.action === "queue"));
              expect(decision.degraded, label).toBe(degraded);
            } else expect(decision.reason.length).toBeGreaterThan(10);
          }
        }
      }
    }
    expect(cases).toBe(48 * 6 * 2 * 4);
  });

  it("steers a fully active turn by interrupt-and-restart on a restart-only provider when the mode is auto, degraded, saying why", () => {
    const live = { status: "running" as const, providerTurnLive: true, interruptRequested: false, text: "work" };
    const restartOnly = caps({ interrupt: true, steeringByInterruptRestart: true });
    const decision = decideMessageDispatch({
      requested: "auto",
      activeRun: live,
      capabilities: restartOnly,
      text: "new input",
      notification: false,
    });
    expect(decision).toMatchObject({
      ok: true,
      asked: "auto",
      action: "restart",
      degraded: true,
      reason: expect.stringContaining("interrupted and restarted"),
    });
    // A notification never cuts a turn short: it queues.
    expect(
      decideMessageDispatch({
        requested: "auto",
        activeRun: live,
        capabilities: restartOnly,
        text: "notice",
        notification: true,
      }),
    ).toMatchObject({ ok: true, action: "queue", degraded: true });
  });

  it("queues auto behind a live turn of a provider that can only stop it (never stops the turn for a default send)", () => {
    const live = { status: "running" as const, providerTurnLive: true, interruptRequested: false, text: "work" };
    const stopOnly = caps({ interrupt: true });
    expect(
      decideMessageDispatch({
        requested: "auto",
        activeRun: live,
        capabilities: stopOnly,
        text: "x",
        notification: false,
      }),
    ).toMatchObject({
      ok: true,
      action: "queue",
      degraded: true,
      reason: expect.stringContaining("neither steer"),
    });
  });

  it("names the missing capability in a refusal", () => {
    const live = { status: "running" as const, providerTurnLive: true, interruptRequested: false, text: "work" };
    const steer = decideMessageDispatch({
      requested: "steer",
      activeRun: live,
      capabilities: caps({}),
      text: "x",
      notification: false,
    });
    expect(steer).toMatchObject({ ok: false, capability: "turns.activeSteering" });
    const restart = decideMessageDispatch({
      requested: "restart",
      activeRun: live,
      capabilities: caps({}),
      text: "x",
      notification: false,
    });
    expect(restart).toMatchObject({ ok: false, capability: "turns.interrupt" });
    const queue = decideMessageDispatch({
      requested: "queue",
      activeRun: live,
      capabilities: NO_CAPABILITIES,
      text: "x",
      notification: false,
    });
    expect(queue).toMatchObject({ ok: false, capability: "turns.terminalStatusQuality" });
  });

  it("never steers or restarts with a maintenance command or into a maintenance turn; auto queues both", () => {
    const live = { status: "running" as const, providerTurnLive: true, interruptRequested: false, text: "work" };
    const compacting = { ...live, text: "  /compact keep the plan" };
    const all = caps({ activeSteering: true, interrupt: true, steeringByInterruptRestart: true });
    expect(
      decideMessageDispatch({
        requested: "auto",
        activeRun: live,
        capabilities: all,
        text: "/compact",
        notification: false,
      }),
    ).toMatchObject({ ok: true, action: "queue" });
    expect(
      decideMessageDispatch({
        requested: "steer",
        activeRun: live,
        capabilities: all,
        text: "/logout now",
        notification: false,
      }).ok,
    ).toBe(false);
    expect(
      decideMessageDispatch({
        requested: "auto",
        activeRun: compacting,
        capabilities: all,
        text: "more",
        notification: false,
      }),
    ).toMatchObject({ ok: true, action: "queue", degraded: false });
    for (const requested of ["steer", "restart"] as const) {
      expect(
        decideMessageDispatch({
          requested,
          activeRun: compacting,
          capabilities: all,
          text: "more",
          notification: false,
        }),
      ).toMatchObject({ ok: false, reason: expect.stringContaining("maintenance") });
    }
    expect(
      decideMessageDispatch({
        requested: "queue",
        activeRun: { ...live, text: "/logout" },
        capabilities: all,
        text: "more",
        notification: false,
      }),
    ).toMatchObject({ ok: true, action: "queue" });
  });
});

describe("session continuation policy", () => {
  const resumable = decodeCapabilities({ sessions: { resume: true } }).capabilities;
  const forgetful = decodeCapabilities({}).capabilities;
  it("resumes natively only with a cursor that has not failed, on a provider that resumes", () => {
    expect(
      decideSessionContinuation({
        capabilities: resumable,
        resumeCursor: "c1",
        resumeFailure: null,
        earlierConversation: true,
      }),
    ).toMatchObject({ asked: "resume", action: "resume", degraded: false });
    expect(
      decideSessionContinuation({
        capabilities: resumable,
        resumeCursor: null,
        resumeFailure: null,
        earlierConversation: false,
      }),
    ).toMatchObject({ asked: "new", action: "new", degraded: false });
  });
  it("hands the history to a new conversation, degraded and saying why, when the old one cannot be reopened", () => {
    const failed = decideSessionContinuation({
      capabilities: resumable,
      resumeCursor: null,
      resumeFailure: "the session file is corrupt",
      earlierConversation: true,
    });
    expect(failed).toMatchObject({ asked: "resume", action: "handoff", degraded: true });
    expect(failed.reason).toBe(
      "The provider could not reopen the thread's conversation (the session file is corrupt), so a new provider session got the thread's history as portable context.",
    );
    expect(
      decideSessionContinuation({
        capabilities: resumable,
        resumeCursor: null,
        resumeFailure: "gone",
        earlierConversation: false,
      }),
    ).toMatchObject({ action: "new", degraded: true });
    const cannot = decideSessionContinuation({
      capabilities: forgetful,
      resumeCursor: "c1",
      resumeFailure: null,
      earlierConversation: true,
    });
    expect(cannot).toMatchObject({
      action: "handoff",
      degraded: true,
      reason: expect.stringContaining("cannot reopen a conversation"),
    });
    expect(
      decideSessionContinuation({
        capabilities: resumable,
        resumeCursor: null,
        resumeFailure: null,
        earlierConversation: true,
      }),
    ).toMatchObject({
      action: "handoff",
      degraded: true,
      reason: expect.stringContaining("No earlier provider session left"),
    });
  });
});

describe("fork policy", () => {
  const native = decodeCapabilities({
    threads: { fork: true, forkFromTurn: true },
    identity: { nativeThreadIds: "strong" },
  }).capabilities;
  it("forks natively only when every condition holds", () => {
    expect(
      decideFork({ sameProviderInstance: true, sourceHasNativeThread: true, atTurn: true, capabilities: native })
        .action,
    ).toBe("native");
    for (const change of [{ sameProviderInstance: false }, { sourceHasNativeThread: false }]) {
      expect(
        decideFork({
          sameProviderInstance: true,
          sourceHasNativeThread: true,
          atTurn: false,
          capabilities: native,
          ...change,
        }).action,
      ).toBe("portable");
    }
    const noTurnFork = decodeCapabilities({
      threads: { fork: true },
      identity: { nativeThreadIds: "strong" },
    }).capabilities;
    expect(
      decideFork({ sameProviderInstance: true, sourceHasNativeThread: true, atTurn: true, capabilities: noTurnFork })
        .action,
    ).toBe("portable");
    expect(
      decideFork({ sameProviderInstance: true, sourceHasNativeThread: true, atTurn: false, capabilities: noTurnFork })
        .action,
    ).toBe("native");
    const weakIds = decodeCapabilities({ threads: { fork: true }, identity: { nativeThreadIds: "weak" } }).capabilities;
    expect(
      decideFork({ sameProviderInstance: true, sourceHasNativeThread: true, atTurn: false, capabilities: weakIds })
        .action,
    ).toBe("portable");
    expect(
      decideFork({
        sameProviderInstance: true,
        sourceHasNativeThread: true,
        atTurn: false,
        capabilities: NO_CAPABILITIES,
      }).action,
    ).toBe("portable");
  });
});

describe("mode ceilings and step-down", () => {
  const all = decodeCapabilities({
    runtimeModes: [...RUNTIME_MODES],
    interactionModes: ["plan", "default"],
  }).capabilities;
  const partial = decodeCapabilities({
    runtimeModes: ["approval-required", "auto-accept-edits"],
    interactionModes: ["default"],
  }).capabilities;

  it("never lets a child exceed the caller, for every pair of modes", () => {
    for (const ceiling of RUNTIME_MODES) {
      for (const requested of RUNTIME_MODES) {
        const decision = resolveModes({
          ceiling: { runtimeMode: ceiling, interactionMode: "default" },
          requestedRuntimeMode: requested,
          target: all,
          targetName: "t",
        });
        if (RUNTIME_MODES.indexOf(requested) > RUNTIME_MODES.indexOf(ceiling))
          expect(decision).toMatchObject({ ok: false, code: "runtime_mode_escalation_denied" });
        else expect(decision).toMatchObject({ ok: true, runtimeMode: requested });
      }
    }
    expect(
      resolveModes({
        ceiling: { runtimeMode: "full-access", interactionMode: "plan" },
        requestedInteractionMode: "default",
        target: all,
        targetName: "t",
      }),
    ).toMatchObject({
      ok: false,
      code: "interaction_mode_escalation_denied",
    });
    expect(
      resolveModes({
        ceiling: { runtimeMode: "full-access", interactionMode: "default" },
        requestedInteractionMode: "plan",
        target: all,
        targetName: "t",
      }),
    ).toMatchObject({
      ok: true,
      interactionMode: "plan",
    });
  });

  it("steps an inherited mode down to the broadest the target offers, and refuses an explicit one it does not offer", () => {
    expect(
      resolveModes({
        ceiling: { runtimeMode: "full-access", interactionMode: "default" },
        target: partial,
        targetName: "t",
      }),
    ).toMatchObject({
      ok: true,
      runtimeMode: "auto-accept-edits",
      steppedDown: true,
    });
    expect(
      resolveModes({
        ceiling: { runtimeMode: "full-access", interactionMode: "default" },
        requestedRuntimeMode: "full-access",
        target: partial,
        targetName: "t",
      }),
    ).toMatchObject({
      ok: false,
      code: "invalid_request",
    });
    // A plan-mode caller cannot start work on a provider without plan mode.
    expect(
      resolveModes({
        ceiling: { runtimeMode: "approval-required", interactionMode: "plan" },
        target: partial,
        targetName: "t",
      }),
    ).toMatchObject({ ok: false, code: "invalid_request" });
  });
});

describe("capability decoding", () => {
  it("reads a missing or malformed field as the weaker guarantee, with warnings", () => {
    const decoded = decodeCapabilities({
      turns: { activeSteering: "yes", terminalStatusQuality: "great", steeringByInterruptRestart: true },
      runtimeModes: ["full-access", "root"],
    });
    expect(decoded.capabilities.turns.activeSteering).toBe(false);
    expect(decoded.capabilities.turns.terminalStatusQuality).toBe("none");
    expect(decoded.capabilities.turns.steeringByInterruptRestart).toBe(false);
    expect(decoded.capabilities.runtimeModes).toEqual(["full-access"]);
    expect(decoded.warnings.length).toBe(4);
    expect(decodeCapabilities(undefined).capabilities).toEqual(NO_CAPABILITIES);
    // The model short list: missing or unknown is first_n, the shorter list.
    expect(decoded.capabilities.models.shortList).toBe("first_n");
    expect(decodeCapabilities({ models: { shortList: "all_current" } }).capabilities.models.shortList).toBe(
      "all_current",
    );
    const odd = decodeCapabilities({ models: { shortList: "everything" } });
    expect(odd.capabilities.models.shortList).toBe("first_n");
    expect(odd.warnings).toEqual([expect.stringContaining("models.shortList")]);
  });
});

const RUN_STATUSES: RunStatus[] = [
  "queued",
  "starting",
  "running",
  "waiting",
  "completed",
  "failed",
  "cancelled",
  "interrupted",
];

describe("stop policy (t3_thread_interrupt, Stop): every run status, reach and provider", () => {
  it("stops anything that has not reached the provider, and a running turn only where the provider can interrupt it", () => {
    let cases = 0;
    for (const status of RUN_STATUSES) {
      for (const reachedProvider of [false, true]) {
        for (const interrupt of [false, true]) {
          cases += 1;
          const decision = decideRunStop({ status, reachedProvider }, caps({ interrupt }));
          const label = JSON.stringify({ status, reachedProvider, interrupt });
          let expected: string;
          if (TERMINAL_RUN_STATUSES.includes(status)) expected = "already_terminal";
          else if (status === "queued") expected = "cancel_queued";
          else if (!reachedProvider) expected = "end_before_provider";
          else expected = interrupt ? "interrupt_turn" : "refused";
          expect(decision.ok ? decision.action : "refused", label).toBe(expected);
          if (!decision.ok) expect(decision.capability, label).toBe("turns.interrupt");
          expect(decision.reason.length, label).toBeGreaterThan(10);
        }
      }
    }
    expect(cases).toBe(8 * 2 * 2);
  });
});

describe("task cancel policy (task_cancel on an unpublished task): every shape of remaining work", () => {
  it("goes ahead when it can stop something, and names the missing capability when a running turn is all there is", () => {
    const actives: ({ status: RunStatus; reachedProvider: boolean } | null)[] = [null];
    for (const status of ["starting", "running", "waiting"] as const)
      for (const reachedProvider of [false, true]) actives.push({ status, reachedProvider });
    let cases = 0;
    for (const activeRun of actives) {
      for (const queuedRuns of [0, 1, 3]) {
        for (const unfinishedNestedTasks of [0, 1]) {
          for (const interrupt of [false, true]) {
            cases += 1;
            const decision = decideTaskCancel({
              activeRun,
              queuedRuns,
              unfinishedNestedTasks,
              capabilities: caps({ interrupt }),
            });
            const label = JSON.stringify({ activeRun, queuedRuns, unfinishedNestedTasks, interrupt });
            const stopsActive = activeRun !== null && (!activeRun.reachedProvider || interrupt);
            const ok = stopsActive || queuedRuns > 0 || unfinishedNestedTasks > 0;
            expect(decision.ok, label).toBe(ok);
            if (decision.ok) expect(decision.stopsActiveRun, label).toBe(stopsActive);
            else expect(decision.capability, label).toBe(activeRun === null ? null : "turns.interrupt");
          }
        }
      }
    }
    expect(cases).toBe(7 * 3 * 2 * 2);
  });
});

describe("provider conduct (what orchestrator_capabilities lists): the decisions' own answers, for every capability combination", () => {
  it("lists steering, fork and interrupt exactly as the dispatch, fork and stop decisions decide them", () => {
    const liveTurn = { status: "running" as const, providerTurnLive: true, interruptRequested: false, text: "work" };
    let cases = 0;
    for (const activeSteering of [false, true])
      for (const interrupt of [false, true])
        for (const steeringByInterruptRestart of [false, true])
          for (const terminalStatusQuality of QUALITIES)
            for (const fork of [false, true])
              for (const nativeThreadIds of QUALITIES) {
                cases += 1;
                const capabilities = decodeCapabilities({
                  turns: { activeSteering, interrupt, steeringByInterruptRestart, terminalStatusQuality },
                  threads: { fork },
                  identity: { nativeThreadIds },
                }).capabilities;
                const conduct = describeProviderConduct(capabilities);
                const label = JSON.stringify({
                  activeSteering,
                  interrupt,
                  steeringByInterruptRestart,
                  terminalStatusQuality,
                  fork,
                  nativeThreadIds,
                });

                // The documented rules, written out independently of the policy's code.
                const expectedSteering = activeSteering
                  ? "native"
                  : interrupt && steeringByInterruptRestart
                    ? "interrupt_restart"
                    : terminalStatusQuality !== "none"
                      ? "queue"
                      : "none";
                expect(conduct.steering, label).toBe(expectedSteering);
                expect(conduct.fork, label).toBe(fork && nativeThreadIds === "strong" ? "native" : "portable");
                expect(conduct.interrupt, label).toBe(interrupt ? "running_turns" : "unstarted_only");

                // And what the decisions do with real requests agrees with the listing.
                const send = decideMessageDispatch({
                  requested: "auto",
                  activeRun: liveTurn,
                  capabilities,
                  text: "more",
                  notification: false,
                });
                const sendAction = send.ok ? send.action : "refused";
                expect(sendAction, label).toBe(
                  { native: "steer", interrupt_restart: "restart", queue: "queue", none: "refused" }[conduct.steering],
                );
                const forked = decideFork({
                  sameProviderInstance: true,
                  sourceHasNativeThread: true,
                  atTurn: false,
                  capabilities,
                });
                expect(forked.action, label).toBe(conduct.fork);
                const stop = decideRunStop({ status: "running", reachedProvider: true }, capabilities);
                expect(stop.ok, label).toBe(conduct.interrupt === "running_turns");
                const cancel = decideTaskCancel({
                  activeRun: { status: "running", reachedProvider: true },
                  queuedRuns: 0,
                  unfinishedNestedTasks: 0,
                  capabilities,
                });
                expect(cancel.ok, label).toBe(conduct.interrupt === "running_turns");
              }
    expect(cases).toBe(2 * 2 * 2 * 3 * 2 * 3);
  });
});

describe("native sub-agent stop policy: what stopping one costs, from the capability record alone", () => {
  it("stops the parent's turn wherever a running turn can be stopped and the provider has native sub-agents; says why, per control", () => {
    let cases = 0;
    for (const native of ["none", "observed", "full"] as const)
      for (const control of ["none", "observe", "stop", "steer"] as const)
        for (const interrupt of [false, true]) {
          cases += 1;
          const capabilities = decodeCapabilities({
            turns: { interrupt, terminalStatusQuality: "strong" },
            subagents: { native, exposesChildThreadIds: false, control },
          }).capabilities;
          const label = JSON.stringify({ native, control, interrupt });
          const decision = decideNativeSubagentStop(capabilities);
          expect(decision.scope, label).toBe(native !== "none" && interrupt ? "parent_turn" : "none");
          expect(describeProviderConduct(capabilities).nativeSubagentStop, label).toBe(decision.scope);
          if (decision.scope === "parent_turn")
            expect(decision.reason, label).toContain(
              control === "stop" || control === "steer"
                ? "no operation for it yet"
                : "cannot stop one native sub-agent alone",
            );
        }
    expect(cases).toBe(3 * 4 * 2);
  });
});
