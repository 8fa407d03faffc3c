// Processes on this machine, seen through /proc: which ones carry a marker in their argv (so the
// suite finds the harness processes it caused, and only those), and whether a pid still runs.
import { readdirSync, readFileSync } from "node:fs";

/** `{ pid, argv }` of every process whose command line contains `marker`. */
export function processesWithMarker(marker) {
  const found = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let cmdline;
    try {
      cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
    } catch {
      continue;
    }
    if (!cmdline.includes(marker)) continue;
    const pid = Number(entry);
    if (pid === process.pid || isZombie(pid)) continue;
    found.push({ pid, argv: cmdline.split("\0").filter((part) => part.length > 0) });
  }
  return found;
}

function isZombie(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return true;
  }
}

/** Whether a process runs (a zombie does not count). */
export function isAlive(pid) {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  return !isZombie(pid);
}

/** SIGKILL by pid, for cleaning up what a scenario found left behind. */
export function killPid(pid) {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // already gone
  }
}

/** The process group of a pid, or null when it is gone. */
export function processGroup(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
  } catch {
    return null;
  }
}

/** `{ pid, pgid, argv }` of every live process in one of `groups`. */
export function processesInGroups(groups) {
  const found = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    const pgid = processGroup(pid);
    if (pgid === null || !groups.has(pgid) || isZombie(pid)) continue;
    let argv = [];
    try {
      argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter((part) => part.length > 0);
    } catch {
      continue;
    }
    found.push({ pid, pgid, argv });
  }
  return found;
}
