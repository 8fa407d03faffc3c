import { readdirSync, readFileSync, statSync } from "node:fs";

/**
 * The environment variable every harness process starts with and every process it starts
 * inherits, wherever it moves (setsid, a double fork, nohup): a comma-separated list of marks,
 * one per Switchyard host that started a harness above it (a server run inside a harness adds
 * its own mark after its parent's).
 */
export const PROCESS_TREE_VARIABLE = "SWITCHYARD_PROCESS_TREE";

/** A process of this user whose environment carries process-tree marks, as /proc shows it. */
export interface MarkedProcess {
  readonly pid: number;
  /** The kernel's start time (clock ticks since boot): with the pid, what names the process. */
  readonly startTime: string;
  /** Its process group. */
  readonly pgid: number;
  /** Its scheduler state letter: `T` when stopped (frozen), `Z` a zombie. */
  readonly state: string;
  /** The marks in its environment. */
  readonly marks: readonly string[];
}

/** Whether this system shows other processes' environments (/proc, Linux). */
export const PROCESS_ENVIRONMENTS_VISIBLE = (() => {
  try {
    statSync("/proc/self/environ");
    return true;
  } catch {
    return false;
  }
})();

const ownUid = typeof process.getuid === "function" ? process.getuid() : null;

/**
 * Every live process of this user (never another user's, whatever our privileges) that carries
 * a mark `accepts` takes, and is not this process. Empty where /proc is missing (macOS): there
 * only process groups can be reached.
 */
export function markedProcesses(accepts: (mark: string) => boolean): MarkedProcess[] {
  if (!PROCESS_ENVIRONMENTS_VISIBLE) return [];
  const found: MarkedProcess[] = [];
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const prefix = `${PROCESS_TREE_VARIABLE}=`;
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    try {
      if (ownUid !== null && statSync(`/proc/${entry}`).uid !== ownUid) continue;
      const environ = readFileSync(`/proc/${entry}/environ`, "latin1");
      const at = environ.startsWith(prefix) ? 0 : environ.indexOf(`\0${prefix}`);
      if (at === -1) continue;
      const start = at === 0 ? prefix.length : at + 1 + prefix.length;
      const end = environ.indexOf("\0", start);
      const marks = environ.slice(start, end === -1 ? undefined : end).split(",");
      if (!marks.some(accepts)) continue;
      const stat = statFields(pid);
      if (stat === null || stat.state === "Z") continue;
      found.push({ pid, startTime: stat.startTime, pgid: stat.pgid, state: stat.state, marks });
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

/** State, process group and start time of a pid, or null when it is gone. */
export function statFields(pid: number): { state: string; pgid: number; startTime: string } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may contain spaces and parentheses: count after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { state: fields[0] ?? "?", pgid: Number(fields[2]), startTime: fields[19] ?? "" };
  } catch {
    return null;
  }
}

/**
 * Signals a process only if its pid still names the process that was found (same kernel start
 * time): a pid reused between finding and signalling is left alone. True when signalled.
 */
export function signalSame(process_: MarkedProcess, signal: NodeJS.Signals): boolean {
  const now = statFields(process_.pid);
  if (now === null || now.startTime !== process_.startTime) return false;
  try {
    process.kill(process_.pid, signal);
    return true;
  } catch {
    return false;
  }
}
