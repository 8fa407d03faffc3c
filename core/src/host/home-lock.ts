import { randomBytes } from "node:crypto";
import { linkSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SwitchyardError } from "../spec/index.js";
import { processStartTime } from "../util/process-start-time.js";
import { makePrivateDir, PRIVATE_FILE_MODE } from "../util/private-files.js";

/** The lock file of a home: which process runs the engine on it. */
export const HOME_LOCK_FILE = "server.lock";

/** What the lock file records about its holder. */
export interface HomeLockHolder {
  readonly pid: number;
  /** The kernel's start time of the process (Linux), so a reused pid is not taken for the holder. */
  readonly processStart: string | null;
  /** When the holder took the lock (ISO-8601). */
  readonly since: string;
}

/** An exclusive hold on a home; only one process may run the engine on a home at a time. */
export interface HomeLock {
  readonly file: string;
  readonly holder: HomeLockHolder;
  /** Gives the home up (idempotent); a crashed holder's lock is taken over as stale instead. */
  release(): void;
}

/** How many times a stale lock is taken over before giving up (others are taking it too). */
const TAKEOVER_ATTEMPTS = 5;

function readHolder(file: string): HomeLockHolder | "missing" | "unreadable" {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? "missing" : "unreadable";
  }
  try {
    const parsed = JSON.parse(text) as Partial<HomeLockHolder>;
    if (typeof parsed.pid !== "number" || !Number.isInteger(parsed.pid) || parsed.pid <= 0) return "unreadable";
    return {
      pid: parsed.pid,
      processStart: typeof parsed.processStart === "string" ? parsed.processStart : null,
      since: typeof parsed.since === "string" ? parsed.since : "an unknown time",
    };
  } catch {
    return "unreadable";
  }
}

/** The holder still runs: same pid and, where the kernel tells, the same process start time. */
function holderAlive(holder: HomeLockHolder): boolean {
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  if (holder.processStart === null) return true;
  const current = processStartTime(holder.pid);
  return current === null || current === holder.processStart;
}

/** What a home's lock says now, read without taking it (`switchyard doctor`). */
export type HomeLockState =
  | { readonly state: "free" }
  | { readonly state: "held"; readonly holder: HomeLockHolder }
  /** Left by a process that is gone (or unreadable): the next server takes it over. */
  | { readonly state: "stale"; readonly holder: HomeLockHolder | null };

/** Reads a home's lock without taking it or changing anything. */
export function inspectHomeLock(home: string): HomeLockState {
  const current = readHolder(join(home, HOME_LOCK_FILE));
  if (current === "missing") return { state: "free" };
  if (current === "unreadable") return { state: "stale", holder: null };
  return holderAlive(current) ? { state: "held", holder: current } : { state: "stale", holder: current };
}

/** Another live process holds the home. */
export class HomeLockedError extends SwitchyardError {
  constructor(
    readonly home: string,
    readonly holder: HomeLockHolder,
  ) {
    super(
      "conflict",
      `another Switchyard server (pid ${holder.pid}, since ${holder.since}) uses this home (${home}). Stop it first, or use another home with --home <dir> or SWITCHYARD_HOME.`,
      { home, pid: holder.pid, since: holder.since },
    );
    this.name = "HomeLockedError";
  }
}

/**
 * Takes the home's lock, or throws {@link HomeLockedError} naming the live holder. The lock
 * file is created atomically (a hard link of a fully written file, so nobody reads half of
 * it); a lock whose holder is gone (dead pid, or a pid reused by another process) is stale and
 * taken over. Commands that only read the home never take it.
 */
export function acquireHomeLock(home: string): HomeLock {
  makePrivateDir(home);
  const file = join(home, HOME_LOCK_FILE);
  const holder: HomeLockHolder = {
    pid: process.pid,
    processStart: processStartTime(process.pid),
    since: new Date().toISOString(),
  };
  const mine = JSON.stringify(holder);
  const draft = `${file}.${process.pid}.${randomBytes(4).toString("hex")}`;
  writeFileSync(draft, mine, { mode: PRIVATE_FILE_MODE });
  try {
    for (let attempt = 0; attempt < TAKEOVER_ATTEMPTS; attempt++) {
      try {
        linkSync(draft, file);
        return lockHandle(file, holder, mine);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      const current = readHolder(file);
      if (current === "missing") continue;
      if (current !== "unreadable" && holderAlive(current)) throw new HomeLockedError(home, current);
      takeOverStale(file, current === "unreadable" ? null : current);
    }
    throw new SwitchyardError(
      "conflict",
      `Could not take the lock of ${home}: other processes keep taking it. Try again.`,
      { home },
    );
  } finally {
    try {
      unlinkSync(draft);
    } catch {
      // already gone
    }
  }
}

/**
 * Moves a stale lock aside. If another process replaced it with a live lock in the meantime,
 * that lock is put back, so the next look finds its holder.
 */
function takeOverStale(file: string, stale: HomeLockHolder | null): void {
  const aside = `${file}.stale.${process.pid}.${randomBytes(4).toString("hex")}`;
  try {
    renameSync(file, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  const moved = readHolder(aside);
  const sameAsJudged =
    moved === "unreadable"
      ? stale === null
      : moved !== "missing" &&
        stale !== null &&
        moved.pid === stale.pid &&
        moved.processStart === stale.processStart &&
        moved.since === stale.since;
  if (!sameAsJudged) {
    try {
      linkSync(aside, file);
    } catch {
      // someone else holds it now; the next look finds them
    }
  }
  try {
    unlinkSync(aside);
  } catch {
    // already gone
  }
}

function lockHandle(file: string, holder: HomeLockHolder, content: string): HomeLock {
  let released = false;
  return {
    file,
    holder,
    release: () => {
      if (released) return;
      released = true;
      // Only our own lock is removed (never one a later server took over after a hang).
      try {
        if (readFileSync(file, "utf8") === content) unlinkSync(file);
      } catch {
        // already gone
      }
    },
  };
}

/** The live process holding a home's lock, or null when none does (no lock, or a stale one). */
export function liveHomeHolder(home: string): HomeLockHolder | null {
  const holder = readHolder(join(home, HOME_LOCK_FILE));
  if (holder === "missing" || holder === "unreadable") return null;
  return holderAlive(holder) ? holder : null;
}
