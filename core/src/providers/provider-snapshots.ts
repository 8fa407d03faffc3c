import type { ProbeDepth } from "../spec/index.js";
import type { Clock } from "../util/clock.js";
import type { Logger } from "../logging/logger.js";

/** What one probe of one instance concluded, as the snapshot keeps it. */
export interface ProbedAvailability {
  /** It can run work now. */
  readonly available: boolean;
}

/** Tuning of {@link ProviderSnapshots}; every field has a default. */
export interface ProviderSnapshotTimings {
  /** How long an answer may wait for an instance's first probe before saying "checking". */
  readonly firstAnswerWaitMs: number;
  /** An unavailable result older than this is re-probed before work is refused on it. */
  readonly recheckUnavailableMs: number;
  /** An unavailable result older than this is re-probed in the background when it is read. */
  readonly revalidateUnavailableMs: number;
  /** A probe that has not settled after this long is reported as failed. */
  readonly probeTimeoutMs: number;
  /** How many probes run at once (each may start a harness process). */
  readonly maxConcurrentProbes: number;
}

export const DEFAULT_SNAPSHOT_TIMINGS: ProviderSnapshotTimings = {
  firstAnswerWaitMs: 1_500,
  recheckUnavailableMs: 5_000,
  revalidateUnavailableMs: 30_000,
  probeTimeoutMs: 90_000,
  maxConcurrentProbes: 3,
};

/** One instance's latest probe result. */
export interface Snapshot<T> {
  readonly value: T;
  readonly depth: ProbeDepth;
  /** When the probe behind it started (ms since the epoch). */
  readonly probedAtMs: number;
}

interface Entry<T> {
  /** The newest full-depth result, else the newest inspect-depth one. */
  latest: Snapshot<T> | null;
  /** The probe running now, and how deep it goes. */
  inflight: { readonly depth: ProbeDepth; readonly done: Promise<Snapshot<T>> } | null;
  /** Set when the instance's first probe started (for "checking since"). */
  firstProbeStartedAtMs: number | null;
  /** Settles when `latest` is first set. */
  readonly firstResult: Promise<void>;
  readonly markFirstResult: () => void;
}

function newEntry<T>(): Entry<T> {
  let markFirstResult!: () => void;
  const firstResult = new Promise<void>((resolve) => {
    markFirstResult = resolve;
  });
  return { latest: null, inflight: null, firstProbeStartedAtMs: null, firstResult, markFirstResult };
}

/**
 * The provider snapshot: one probe result per instance, refreshed in the background (at start,
 * periodically, after a session failed to open) and on demand, so reading it never waits for a
 * harness. Concurrent refreshes of one instance share one probe. An instance's first refresh
 * runs a quick `inspect` probe and then a `full` one, so a first answer comes fast; an inspect
 * result never replaces a full one.
 */
export class ProviderSnapshots<T extends ProbedAvailability> {
  private entries = new Map<string, Entry<T>>();
  private timer: NodeJS.Timeout | null = null;
  private running = 0;
  private readonly queue: (() => void)[] = [];
  private disposed = false;

  constructor(
    private readonly probe: (instanceId: string, depth: ProbeDepth) => Promise<T>,
    private readonly failed: (instanceId: string, message: string) => T,
    private readonly clock: Clock,
    private readonly logger: Logger,
    readonly timings: ProviderSnapshotTimings = DEFAULT_SNAPSHOT_TIMINGS,
  ) {}

  /** Forgets every result (the instances were rebuilt): the next read probes again. */
  reset(instanceIds: readonly string[]): void {
    this.entries = new Map(instanceIds.map((id) => [id, newEntry<T>()]));
  }

  /** The latest result, or null while the first probe runs (it is started if it was not). */
  peek(instanceId: string): Snapshot<T> | null {
    const entry = this.entry(instanceId);
    if (entry === null) return null;
    if (entry.latest === null) {
      if (entry.inflight === null) void this.refresh(instanceId, "full").catch(() => undefined);
      return null;
    }
    if (
      !entry.latest.value.available &&
      entry.inflight === null &&
      this.ageMs(entry.latest) > this.timings.revalidateUnavailableMs
    ) {
      void this.refresh(instanceId, "full").catch(() => undefined);
    }
    return entry.latest;
  }

  /** When the first probe of an instance started, while it has no result yet. */
  checkingSinceMs(instanceId: string): number | null {
    const entry = this.entry(instanceId);
    return entry?.latest === null ? entry.firstProbeStartedAtMs : null;
  }

  /**
   * Results for several instances. One without a result yet is waited for until its first
   * probe has run for `firstAnswerWaitMs` (so only calls right after it started wait, and never
   * longer than that); those still without one map to null.
   */
  async within(instanceIds: readonly string[]): Promise<Map<string, Snapshot<T> | null>> {
    const result = new Map<string, Snapshot<T> | null>();
    const waiting: Promise<unknown>[] = [];
    let deadline = 0;
    for (const id of instanceIds) {
      const snapshot = this.peek(id);
      result.set(id, snapshot);
      const entry = this.entry(id);
      if (snapshot !== null || entry === null) continue;
      waiting.push(entry.firstResult);
      deadline = Math.max(
        deadline,
        (entry.firstProbeStartedAtMs ?? this.clock.nowMs()) + this.timings.firstAnswerWaitMs,
      );
    }
    const waitMs = Math.min(this.timings.firstAnswerWaitMs, deadline - this.clock.nowMs());
    if (waiting.length === 0 || waitMs <= 0) return result;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(waiting),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, waitMs);
      }),
    ]);
    clearTimeout(timer);
    for (const id of instanceIds) if (result.get(id) === null) result.set(id, this.entry(id)?.latest ?? null);
    return result;
  }

  /** A full-depth result: the latest one, else the one a probe running now (or started now) gives. */
  async settled(instanceId: string): Promise<Snapshot<T> | null> {
    const entry = this.entry(instanceId);
    if (entry === null) return null;
    if (entry.latest?.depth === "full") return entry.latest;
    return this.refresh(instanceId, "full");
  }

  /** Age of a result in milliseconds. */
  ageMs(snapshot: Snapshot<T>): number {
    return this.clock.nowMs() - snapshot.probedAtMs;
  }

  /**
   * Probes an instance now, or joins the probe already running when it goes at least as deep.
   * The first refresh of an instance runs `inspect` first and publishes it, then `full`.
   */
  refresh(instanceId: string, depth: ProbeDepth): Promise<Snapshot<T>> {
    const entry = this.entry(instanceId);
    if (entry === null) return Promise.reject(new Error(`Unknown provider instance "${instanceId}".`));
    const running = entry.inflight;
    if (running !== null && (running.depth === "full" || depth === "inspect")) return running.done;
    if (this.disposed) {
      // Shutting down: no new harness process; answer with what is known.
      return Promise.resolve(
        entry.latest ?? {
          value: this.failed(instanceId, "The host is shutting down."),
          depth,
          probedAtMs: this.clock.nowMs(),
        },
      );
    }
    const after = running?.done.catch(() => undefined) ?? Promise.resolve();
    const firstEver = entry.latest === null && running === null && depth === "full";
    const done = (async () => {
      await after;
      if (firstEver) await this.probeInto(entry, instanceId, "inspect").catch(() => undefined);
      return this.probeInto(entry, instanceId, depth);
    })();
    const inflight = { depth, done };
    entry.inflight = inflight;
    entry.firstProbeStartedAtMs ??= this.clock.nowMs();
    void done.then(
      () => this.clearInflight(entry, inflight),
      () => this.clearInflight(entry, inflight),
    );
    return done;
  }

  /** Refreshes every instance now, then every `intervalMs`, until {@link stop}. */
  start(instanceIds: () => readonly string[], intervalMs: number): void {
    if (this.timer !== null || this.disposed) return;
    const all = () => {
      for (const id of instanceIds()) void this.refresh(id, "full").catch(() => undefined);
    };
    all();
    this.timer = setInterval(all, intervalMs);
    this.timer.unref();
  }

  /**
   * Stops the periodic refresh and waits (at most `waitMs`) for probes still running, so none
   * starts a harness process after the host began to shut down.
   */
  async stop(waitMs = 10_000): Promise<void> {
    this.disposed = true;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    const running = [...this.entries.values()].flatMap((entry) =>
      entry.inflight === null ? [] : [entry.inflight.done.catch(() => undefined)],
    );
    if (running.length === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(running), new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)))]);
    clearTimeout(timer);
  }

  private entry(instanceId: string): Entry<T> | null {
    return this.entries.get(instanceId) ?? null;
  }

  private clearInflight(entry: Entry<T>, inflight: Entry<T>["inflight"]): void {
    if (entry.inflight === inflight) entry.inflight = null;
  }

  private async probeInto(entry: Entry<T>, instanceId: string, depth: ProbeDepth): Promise<Snapshot<T>> {
    const snapshot = await this.limited(async (): Promise<Snapshot<T>> => {
      const probedAtMs = this.clock.nowMs();
      return { value: await this.bounded(instanceId, depth), depth, probedAtMs };
    });
    const { probedAtMs } = snapshot;
    // The instances may have been rebuilt meanwhile; a result for the old entry is dropped.
    if (this.entries.get(instanceId) !== entry) return snapshot;
    const current = entry.latest;
    // A deeper result always wins over a shallower one; among equals, the later-started probe.
    const replaces =
      current === null ||
      (depth === "full" && current.depth === "inspect") ||
      (depth === current.depth && current.probedAtMs <= probedAtMs);
    if (replaces) entry.latest = snapshot;
    entry.markFirstResult();
    return entry.latest ?? snapshot;
  }

  private async bounded(instanceId: string, depth: ProbeDepth): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<T>((resolve) => {
      timer = setTimeout(() => {
        this.logger.warn("provider status probe timed out", {
          instance: instanceId,
          depth,
          timeoutMs: this.timings.probeTimeoutMs,
        });
        resolve(
          this.failed(
            instanceId,
            `The status probe did not finish within ${Math.round(this.timings.probeTimeoutMs / 1000)} s.`,
          ),
        );
      }, this.timings.probeTimeoutMs);
      timer.unref();
    });
    try {
      return await Promise.race([this.probe(instanceId, depth), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async limited<R>(fn: () => Promise<R>): Promise<R> {
    // A finished probe hands its slot straight to the next waiter.
    if (this.running >= this.timings.maxConcurrentProbes)
      await new Promise<void>((resolve) => this.queue.push(resolve));
    else this.running += 1;
    try {
      return await fn();
    } finally {
      const next = this.queue.shift();
      if (next !== undefined) next();
      else this.running -= 1;
    }
  }
}
