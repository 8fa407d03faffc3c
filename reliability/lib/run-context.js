// What one run of the suite shares across its scenarios: a temporary root on this machine, the
// log files of every server it started, the homes (databases) it created, every token it was
// issued or saw, the argv of harness processes it sampled, and the processes it started, so
// that nothing it started outlives it.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export class RunContext {
  constructor({ keep = false, seed = 0 } = {}) {
    this.root = mkdtempSync(join(tmpdir(), "switchyard-reliability-"));
    this.logDir = join(this.root, "logs");
    mkdirSync(this.logDir, { recursive: true });
    this.keep = keep;
    /** The seed of generated inputs (malformed.js): printed, and given again to replay a run. */
    this.seed = seed;
    /** Log files of every server (stdout and stderr). */
    this.logFiles = [];
    /** Every home a scenario created; their databases are scanned for secrets. */
    this.homes = [];
    /** Every bearer token issued to or captured by the suite. */
    this.tokens = new Set();
    /** `{ pid, argv }` of harness processes seen while they ran. */
    this.harnessArgv = [];
    /** Folders known to hold tokens (a harness leaked them there): the secrets search must find them. */
    this.knownLeaks = [];
    this.tracked = new Map();
    this.homeCounter = 0;
  }

  /**
   * A new, empty Switchyard home under the run's root, made 0700 as a careful user would (the
   * secrets figure holds everything Switchyard creates in it to private modes). With
   * `create: false` only its path: Switchyard creates it.
   */
  newHome(label, { create = true } = {}) {
    const home = join(this.root, `${label}-${++this.homeCounter}`);
    if (create) mkdirSync(home, { recursive: true, mode: 0o700 });
    this.homes.push(home);
    return home;
  }

  /** A scratch folder (workspaces, gates, agent state). */
  dir(...parts) {
    const dir = join(this.root, ...parts);
    mkdirSync(dir, { recursive: true });
    return dir;
  }

  /** Remembers a process this suite started, so cleanup can stop it by its pid. */
  track(pid, label) {
    if (pid !== undefined) this.tracked.set(pid, label);
  }

  /** Stops what is still running, by pid, only processes this run started. */
  killTracked() {
    for (const pid of this.tracked.keys()) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    this.tracked.clear();
  }

  /** Stops what is still running and removes the root (unless asked to keep it). */
  cleanup() {
    this.killTracked();
    if (!this.keep) rmSync(this.root, { recursive: true, force: true });
  }
}
