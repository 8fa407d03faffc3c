import type { CommandOutcome } from "../../../src/engine/ports.js";
import type { ProcessCommand, ProcessExecution } from "./store-harness.js";

/**
 * The test's side of a store process's `execute` (both backends' processes speak the same
 * lines): the command is sent with `tag`, and its answers, which carry the tag and come as its
 * phases do ({"phase":"starting"}, {"phase":"holding"}, then "done" or "failed"), settle the
 * execution's promises. `onAnswer` is what the caller hands the process's tagged answers to.
 */
export function processExecution(
  send: (line: string) => void,
  exited: Promise<unknown>,
  tag: string,
  command: ProcessCommand,
): { readonly execution: ProcessExecution; readonly onAnswer: (answer: Record<string, unknown>) => void } {
  const phases = new Map<
    string,
    {
      promise: Promise<Record<string, unknown>>;
      resolve: (answer: Record<string, unknown>) => void;
      reject: (error: Error) => void;
    }
  >();
  for (const phase of ["starting", "holding", "settled"]) {
    let resolve!: (answer: Record<string, unknown>) => void;
    let reject!: (error: Error) => void;
    const promise = new Promise<Record<string, unknown>>((res, rej) => ((resolve = res), (reject = rej)));
    // A phase nobody awaits (`holding` of a command not held) must not be an unhandled rejection.
    promise.catch(() => undefined);
    phases.set(phase, { promise, resolve, reject });
  }
  const resolved = new Set<string>();
  const onAnswer = (answer: Record<string, unknown>) => {
    const phase = answer.phase === "done" || answer.phase === "failed" ? "settled" : String(answer.phase);
    resolved.add(phase);
    phases.get(phase)?.resolve(answer);
  };
  void exited.then(() => {
    for (const [phase, waiter] of phases) {
      // A command not held never holds: only what could still come is refused.
      if (resolved.has(phase) || (phase === "holding" && !command.hold)) continue;
      waiter.reject(new Error(`the store process exited before ${phase}`));
    }
  });
  send(`${JSON.stringify({ op: "execute", tag, ...command })}\n`);
  return {
    onAnswer,
    execution: {
      starting: phases.get("starting")!.promise.then(() => undefined),
      holding: phases.get("holding")!.promise.then(() => undefined),
      settled: phases
        .get("settled")!
        .promise.then((answer) =>
          answer.phase === "done"
            ? { outcome: answer.outcome as CommandOutcome<unknown>, ran: answer.ran === true }
            : { error: answer.error as { code: string | null; message: string } },
        ),
      release: () => send(`${JSON.stringify({ op: "release", tag })}\n`),
    },
  };
}
