import { randomUUID } from "node:crypto";
import { isRegistryError, type InstallProgress, type RegistryCatalog } from "@switchyard/registry-cache";
import type { PluginLogger } from "@switchyard/sdk";

/**
 * Installs started over the HTTP API (the web UI's Install button): `RegistryCatalog.prepare`,
 * the same installer `switchyard registry install` runs, in the background, its progress kept
 * where a request can read it or wait for its next change. Jobs live in the server's memory:
 * after a restart the cache's receipts say what is installed, and a new install of an agent
 * that is there finishes at once as already installed.
 */

/** Where an install job is. */
export type InstallJobPhase = "waiting" | "download" | "verify" | "extract" | "install_package" | "done" | "failed";

/** One install job as the API shows it. */
export interface InstallJobView {
  readonly jobId: string;
  readonly agentId: string;
  /** The registry version being installed. */
  readonly version: string;
  readonly phase: InstallJobPhase;
  /** Archive bytes received (0 for package installs). */
  readonly receivedBytes: number;
  /** The archive's size when the server announced it. */
  readonly totalBytes: number | null;
  /** 0–100 by bytes while downloading; 100 once the archive is here; null when the size is unknown. */
  readonly percent: number | null;
  /** Grows with every change, so a reader can wait for the next one (`afterRevision`). */
  readonly revision: number;
  readonly startedAt: string;
  readonly finishedAt: string | null;
  /** Set when done: nothing had to be installed. */
  readonly alreadyInstalled: boolean | null;
  /** Set when failed: the registry's typed reason (`checksum_mismatch`, `download_failed`, …). */
  readonly error: {
    readonly code: string;
    readonly message: string;
    readonly details: Readonly<Record<string, unknown>>;
  } | null;
}

interface Job {
  view: InstallJobView;
  readonly key: string;
  readonly waiters: Set<() => void>;
}

/** How many finished jobs are remembered (the oldest go first). */
const FINISHED_KEPT = 50;

function isFinished(phase: InstallJobPhase): boolean {
  return phase === "done" || phase === "failed";
}

export class InstallJobs {
  private readonly jobs = new Map<string, Job>();
  /** The live (or done) job per agent version: a repeated request joins it instead of installing again. */
  private readonly byKey = new Map<string, Job>();

  constructor(
    private readonly catalog: RegistryCatalog,
    private readonly logger: PluginLogger,
    private readonly signal: AbortSignal,
  ) {}

  /**
   * Starts installing `agentId`'s current registry version, or returns the job already
   * installing (or done installing) it; a failed job is not joined: asking again retries.
   * @throws RegistryError `invalid_agent_id`, `not_found`, index reasons (before any job exists).
   */
  async start(agentId: string): Promise<{ readonly job: InstallJobView; readonly created: boolean }> {
    const { agent } = await this.catalog.show(agentId);
    const key = `${agent.id}@${agent.version}`;
    const existing = this.byKey.get(key);
    if (existing !== undefined && existing.view.phase !== "failed") {
      // A finished install that was removed since (`switchyard registry uninstall`) is installed anew.
      const removed =
        existing.view.phase === "done" &&
        !(await this.catalog.list()).some(
          (install) => install.agentId === agent.id && install.version === agent.version,
        );
      const current = this.byKey.get(key);
      if (current !== undefined && (!removed || current !== existing)) return { job: current.view, created: false };
    }
    const job: Job = {
      key,
      waiters: new Set(),
      view: {
        jobId: `install_${randomUUID().replaceAll("-", "").slice(0, 16)}`,
        agentId: agent.id,
        version: agent.version,
        phase: "waiting",
        receivedBytes: 0,
        totalBytes: null,
        percent: null,
        revision: 1,
        startedAt: new Date().toISOString(),
        finishedAt: null,
        alreadyInstalled: null,
        error: null,
      },
    };
    this.jobs.set(job.view.jobId, job);
    this.byKey.set(key, job);
    this.forgetOldJobs();
    void this.run(job);
    return { job: job.view, created: true };
  }

  /** A job, or null when there is none with that id (or it was forgotten). */
  get(jobId: string): InstallJobView | null {
    return this.jobs.get(jobId)?.view ?? null;
  }

  /** Every remembered job, newest first. */
  list(): InstallJobView[] {
    return [...this.jobs.values()].map((job) => job.view).reverse();
  }

  /**
   * The job once its revision is above `afterRevision`, or as it is when `maxWaitMs` passed or
   * `signal` aborted: a reader follows an install by asking again with the revision it got.
   */
  async waitForChange(
    jobId: string,
    afterRevision: number,
    maxWaitMs: number,
    signal: AbortSignal,
  ): Promise<InstallJobView | null> {
    const job = this.jobs.get(jobId);
    if (job === undefined) return null;
    if (job.view.revision > afterRevision || isFinished(job.view.phase)) return job.view;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        job.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, maxWaitMs);
      signal.addEventListener("abort", done, { once: true });
      job.waiters.add(done);
    });
    return job.view;
  }

  private async run(job: Job): Promise<void> {
    try {
      const prepared = await this.catalog.prepare(job.view.agentId, {
        onProgress: (progress) => this.onProgress(job, progress),
        signal: this.signal,
      });
      this.update(job, {
        phase: "done",
        alreadyInstalled: prepared.alreadyInstalled,
        finishedAt: new Date().toISOString(),
        ...(prepared.alreadyInstalled ? { percent: 100 } : {}),
      });
    } catch (error) {
      const typed = isRegistryError(error)
        ? { code: error.reason, message: error.message, details: { ...error.details } }
        : {
            code: "internal",
            message: `The install failed unexpectedly: ${error instanceof Error ? error.message : String(error)}`,
            details: {},
          };
      if (!isRegistryError(error))
        this.logger.error("registry install failed unexpectedly", { agentId: job.view.agentId, error: typed.message });
      this.update(job, { phase: "failed", error: typed, finishedAt: new Date().toISOString() });
    }
  }

  private onProgress(job: Job, progress: InstallProgress): void {
    switch (progress.phase) {
      case "waiting_for_lock":
        return this.update(job, { phase: "waiting" });
      case "downloading": {
        const total = progress.totalBytes ?? null;
        const percent =
          total === null || total <= 0 ? null : Math.min(100, Math.floor((progress.receivedBytes / total) * 100));
        return this.update(job, {
          phase: "download",
          receivedBytes: progress.receivedBytes,
          totalBytes: total,
          percent,
        });
      }
      case "verifying":
        return this.update(job, { phase: "verify", percent: 100 });
      case "extracting":
        return this.update(job, { phase: "extract", percent: 100 });
      case "installing_package":
        return this.update(job, { phase: "install_package" });
      case "done":
        // The job is done when prepare returns (its result says what was installed).
        return;
    }
  }

  private update(job: Job, change: Partial<Omit<InstallJobView, "jobId" | "revision">>): void {
    if (isFinished(job.view.phase)) return;
    job.view = { ...job.view, ...change, revision: job.view.revision + 1 };
    for (const wake of [...job.waiters]) wake();
  }

  private forgetOldJobs(): void {
    const finished = [...this.jobs.values()].filter((job) => isFinished(job.view.phase));
    for (const job of finished.slice(0, Math.max(0, finished.length - FINISHED_KEPT))) {
      this.jobs.delete(job.view.jobId);
      if (this.byKey.get(job.key) === job) this.byKey.delete(job.key);
    }
  }
}
