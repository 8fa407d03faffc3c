import { setTimeout as sleep } from "node:timers/promises";
import { gateReached } from "@switchyard/testkit/scripted-provider";

/**
 * Waits until scripted turns sit at their `@@gate`s with their conversations saved. A test that
 * kills the host waits for this, not for a run's status: the host records a run as running
 * before its harness has written anything, and a harness killed then has nothing to resume.
 */
export async function untilGatesReached(gateDir: string, names: string[], timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const missing = names.filter((name) => !gateReached(gateDir, name));
    if (missing.length === 0) return;
    if (Date.now() > deadline)
      throw new Error(`scripted turns did not reach their gates within ${timeoutMs} ms: ${missing.join(", ")}`);
    await sleep(25);
  }
}
