import { readFileSync } from "node:fs";

/**
 * The kernel's start time of a process (Linux /proc), so a pid recorded before a crash is only
 * ever signalled if it still names the same process, never a reused pid.
 */
export function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Field 22 (starttime); the command name (field 2) may contain spaces, so count after ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return fields[19] ?? null;
  } catch {
    return null;
  }
}
