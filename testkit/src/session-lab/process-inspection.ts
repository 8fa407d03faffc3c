import { readFileSync, readdirSync } from "node:fs";

/** A process's argv, as the kernel shows it to every local user (`/proc/<pid>/cmdline`). */
export function commandLineOf(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, "utf8")
    .split("\0")
    .filter((arg) => arg !== "");
}

/** A process's environment (`/proc/<pid>/environ`: what root and the process's own user can read). */
export function environmentOf(pid: number): string[] {
  return readFileSync(`/proc/${pid}/environ`, "utf8")
    .split("\0")
    .filter((entry) => entry !== "");
}

/** A process's environment as name → value (the same read as {@link environmentOf}). */
export function environmentVariablesOf(pid: number): Record<string, string> {
  const variables: Record<string, string> = {};
  for (const entry of environmentOf(pid)) {
    const eq = entry.indexOf("=");
    if (eq > 0) variables[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return variables;
}

/** True while a process exists and is not a zombie (an exited child its parent has not reaped). */
export function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/**
 * The argv of every process `root` (default: this one) started, directly or not: what `ps` shows
 * every local user, for tests that a secret is on no command line. Other people's processes on
 * a shared machine are left out; processes that end while it reads are skipped.
 */
export function descendantCommandLines(root = process.pid): string[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {
      // the process is gone
    }
  }
  const lines: string[] = [];
  const pending = [...(children.get(root) ?? [])];
  while (pending.length > 0) {
    const pid = pending.pop()!;
    try {
      lines.push(commandLineOf(pid).join(" "));
    } catch {
      // the process is gone
    }
    pending.push(...(children.get(pid) ?? []));
  }
  return lines;
}
