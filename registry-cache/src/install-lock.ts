import { randomBytes } from "node:crypto";
import { open, readFile, stat, unlink, utimes } from "node:fs/promises";
import { hostname } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import { RegistryError } from "./errors.js";
import { isErrnoException } from "./fs-atomic.js";

export interface InstallLockOptions {
  /** A lock whose file has not been touched for this long is considered abandoned. */
  readonly staleMs: number;
  /** Give up waiting for another holder after this long (`lock_timeout`). */
  readonly timeoutMs: number;
  readonly pollMs?: number;
  /** Called once, when the lock is found held and this caller starts waiting. */
  readonly onWait?: () => void;
  readonly signal?: AbortSignal;
  /** Names the thing locked, for the timeout message. */
  readonly subject: string;
}

const holderSchema = z.object({ pid: z.number(), hostname: z.string(), token: z.string(), acquiredAt: z.string() });
type LockHolder = z.infer<typeof holderSchema>;

/**
 * A cross-process mutex made of one file created with O_EXCL, which is atomic on local file
 * systems. It works the same between two calls in one process and between processes.
 *
 * Abandoned locks (a holder that crashed) are detected two ways: the holder's pid no longer
 * exists on this host, or the file's mtime is older than `staleMs`. A live holder refreshes
 * the mtime on a timer, so a long download is never mistaken for a crash.
 */
export class InstallLock {
  private heartbeat: NodeJS.Timeout | undefined;

  private constructor(
    readonly path: string,
    private readonly token: string,
    staleMs: number,
  ) {
    this.heartbeat = setInterval(
      () => {
        const now = new Date();
        utimes(this.path, now, now).catch(() => undefined);
      },
      Math.max(250, Math.floor(staleMs / 4)),
    );
    this.heartbeat.unref();
  }

  static async acquire(path: string, options: InstallLockOptions): Promise<InstallLock> {
    const deadline = Date.now() + options.timeoutMs;
    const pollMs = options.pollMs ?? 100;
    let announcedWait = false;
    for (;;) {
      const token = randomBytes(12).toString("hex");
      if (await tryCreate(path, token)) return new InstallLock(path, token, options.staleMs);
      const state = await inspectHolder(path, options.staleMs);
      if (state.kind === "stale") {
        await removeIfUnchanged(path, state.raw);
        continue;
      }
      if (state.kind === "gone") continue;
      if (!announcedWait) {
        announcedWait = true;
        options.onWait?.();
      }
      if (Date.now() >= deadline) {
        throw new RegistryError(
          "lock_timeout",
          `Another install of ${options.subject} has held ${path} for more than ${options.timeoutMs} ms. ` +
            "If no other switchyard process is installing it, delete that lock file and retry.",
          { details: { lockFile: path, holderPid: state.holder?.pid, holderHost: state.holder?.hostname } },
        );
      }
      if (options.signal?.aborted === true) {
        throw new RegistryError("aborted", `Waiting for the install lock of ${options.subject} was cancelled.`, {
          details: { lockFile: path },
        });
      }
      await sleep(pollMs);
    }
  }

  /**
   * Takes the lock if nobody alive holds it (it is free, or its holder crashed: a dead pid on this
   * host, or a file untouched for `staleMs`), else answers null at once without waiting.
   */
  static async tryAcquire(path: string, options: { readonly staleMs: number }): Promise<InstallLock | null> {
    // Each pass either takes the lock, or finds it live, or removes an abandoned one; a few
    // passes settle a race with another process doing the same.
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const token = randomBytes(12).toString("hex");
      if (await tryCreate(path, token)) return new InstallLock(path, token, options.staleMs);
      const state = await inspectHolder(path, options.staleMs);
      if (state.kind === "live") return null;
      if (state.kind === "stale") await removeIfUnchanged(path, state.raw);
    }
    return null;
  }

  /** Releases the lock, unless it was judged stale and taken over meanwhile. */
  async release(): Promise<void> {
    clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    try {
      const holder = holderSchema.parse(JSON.parse(await readFile(this.path, "utf8")));
      if (holder.token === this.token) await unlink(this.path);
    } catch {
      // Already gone or replaced: nothing of ours to remove.
    }
  }
}

async function tryCreate(path: string, token: string): Promise<boolean> {
  let handle;
  try {
    handle = await open(path, "wx");
  } catch (error) {
    if (isErrnoException(error) && error.code === "EEXIST") return false;
    throw error;
  }
  try {
    const holder: LockHolder = { pid: process.pid, hostname: hostname(), token, acquiredAt: new Date().toISOString() };
    await handle.writeFile(JSON.stringify(holder));
  } finally {
    await handle.close();
  }
  return true;
}

type HolderState = { kind: "gone" } | { kind: "stale"; raw: string } | { kind: "live"; holder: LockHolder | undefined };

async function inspectHolder(path: string, staleMs: number): Promise<HolderState> {
  let raw: string;
  let mtimeMs: number;
  try {
    raw = await readFile(path, "utf8");
    mtimeMs = (await stat(path)).mtimeMs;
  } catch (error) {
    if (isErrnoException(error) && error.code === "ENOENT") return { kind: "gone" };
    throw error;
  }
  if (Date.now() - mtimeMs > staleMs) return { kind: "stale", raw };
  // An empty or half-written file is a holder between create and write: live, unless old.
  const parsed = holderSchema.safeParse(safeJson(raw));
  if (!parsed.success) return { kind: "live", holder: undefined };
  const holder = parsed.data;
  if (holder.hostname === hostname() && !isProcessAlive(holder.pid)) return { kind: "stale", raw };
  return { kind: "live", holder };
}

// Re-reading right before unlinking narrows the window in which two waiters both judge the
// same lock stale and the second removes the first one's fresh lock.
async function removeIfUnchanged(path: string, raw: string): Promise<void> {
  try {
    if ((await readFile(path, "utf8")) === raw) await unlink(path);
  } catch (error) {
    if (!isErrnoException(error) || error.code !== "ENOENT") throw error;
  }
}

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return isErrnoException(error) && error.code === "EPERM";
  }
}

function safeJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}
