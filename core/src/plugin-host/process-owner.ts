import { AsyncLocalStorage } from "node:async_hooks";

/**
 * Which thread a harness process works for, without asking plugins: the host calls a session's
 * adapter methods inside {@link runOwnedBy}, and every process the plugin starts from there
 * (at once, or later from a timer or a promise those calls set up) is recorded as that
 * thread's, so a stop can reach exactly the stopped thread's processes.
 */
const owners = new AsyncLocalStorage<string>();

/** Runs `work` (and whatever it starts asynchronously) on behalf of `owner` (a thread id). */
export function runOwnedBy<T>(owner: string, work: () => T): T {
  return owners.run(owner, work);
}

/** The thread the current call works for, or null outside any session call (probes). */
export function currentProcessOwner(): string | null {
  return owners.getStore() ?? null;
}
