// Processes on this machine, seen through /proc: which ones carry a marker in their argv or
// their environment (so the suite finds the harness processes it caused, and only those), and
// whether a pid still runs. The environment is what every descendant inherits, whatever process
// group or session it moved to (setsid), so it finds what a process-group view misses.
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

/**
 * `{ pid, pgid, sid, value, argv }` of every live process whose environment has `name` set to a
 * value `matches` accepts. A process's environment is the one it started with: exported by an
 * ancestor, it stays even when the process calls setsid or changes its process group.
 */
export function processesWithEnv(name, matches) {
  const found = [];
  const prefix = `${name}=`;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    let environ;
    try {
      environ = readFileSync(`/proc/${entry}/environ`, "utf8");
    } catch {
      continue;
    }
    const variable = environ.split("\0").find((part) => part.startsWith(prefix));
    if (variable === undefined || !matches(variable.slice(prefix.length)) || isZombie(pid)) continue;
    let argv = [];
    let stat = "";
    try {
      argv = readFileSync(`/proc/${entry}/cmdline`, "utf8")
        .split("\0")
        .filter((part) => part.length > 0);
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue;
    }
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    found.push({ pid, pgid: Number(fields[2]), sid: Number(fields[3]), value: variable.slice(prefix.length), argv });
  }
  return found;
}
