import { createHash } from "node:crypto";
import { inject, injectable } from "tsyringe";
import { type SwitchyardPaths, PathsToken } from "../config/paths.js";
import { type Logger, LoggerToken } from "../logging/logger.js";
import { processStartTime } from "../util/process-start-time.js";
import type { HarnessProcessControl } from "./ports.js";
import { markedProcesses, PROCESS_TREE_VARIABLE, signalSame, type MarkedProcess } from "./process-tree.js";

/** One harness process and everything it starts: found by the mark in their environment. */
export interface HarnessTree {
  /** `<home>.<host pid>.<host start>.<n>`: unique to this harness, this host run and this home. */
  readonly mark: string;
  /** The harness process (leader of its own process group). */
  readonly leader: number;
  /** The thread it works for (see process-owner.ts), or null (probes). */
  readonly owner: string | null;
  /** Processes a stop froze and has not ended yet. */
  frozen: MarkedProcess[];
}

/** How long between passes while ending a tree, so what a dying process forked shows up. */
const PASS_PAUSE_MS = 5;
/** At most this many passes: a tree that forks faster than it can be stopped is given up (logged). */
const MAX_PASSES = 40;

const pauseCell = new Int32Array(new SharedArrayBuffer(4));
/** A short synchronous pause (a stop freezes inside its commit, which cannot await). */
function pause(ms: number): void {
  Atomics.wait(pauseCell, 0, 0, ms);
}

function identity(process_: MarkedProcess): string {
  return `${process_.pid}:${process_.startTime}`;
}

/**
 * The process trees of the harnesses this host started. A harness's process group reaches only
 * what stayed in the group; a process that called setsid, was double-forked or nohup'd leaves
 * it. So every harness starts with a mark in its environment (`SWITCHYARD_PROCESS_TREE`) that
 * all its descendants inherit, and a tree is "every process of this user carrying the mark",
 * read from /proc. The mark names this home, this host process (pid and kernel start time) and
 * the harness, so a host only ever signals its own trees, never another server's or another
 * user's, and a restarted host recognises what its dead predecessor on the same home left. A
 * pid is signalled only while it still has the start time it was found with.
 *
 * Linux only: without /proc (macOS) marks are set but cannot be read, and stopping reaches the
 * harness's process group alone.
 */
@injectable()
export class HarnessProcessTrees implements HarnessProcessControl {
  private readonly trees = new Map<string, HarnessTree>();
  private readonly homeKey: string;
  private readonly hostPrefix: string;
  private next = 0;

  constructor(
    @inject(LoggerToken) private readonly logger: Logger,
    @inject(PathsToken) paths: SwitchyardPaths | null = null,
  ) {
    this.homeKey = createHash("sha256")
      .update(paths?.home ?? "no-home")
      .digest("hex")
      .slice(0, 16);
    this.hostPrefix = `${this.homeKey}.${process.pid}.${processStartTime(process.pid) ?? "0"}.`;
  }

  /** A new mark and the variable's value for a harness's environment (after the marks it inherits). */
  newMark(inherited: string | undefined): { mark: string; value: string } {
    this.next += 1;
    const mark = `${this.hostPrefix}${this.next}`;
    return { mark, value: inherited ? `${inherited},${mark}` : mark };
  }

  /** The name of the environment variable the marks travel in. */
  get variable(): string {
    return PROCESS_TREE_VARIABLE;
  }

  track(mark: string, leader: number, owner: string | null): HarnessTree {
    const tree: HarnessTree = { mark, leader, owner, frozen: [] };
    this.trees.set(mark, tree);
    return tree;
  }

  forget(mark: string): void {
    this.trees.delete(mark);
  }

  /** The live processes of a tree (the leader included while it runs). */
  processesOf(mark: string): MarkedProcess[] {
    return markedProcesses((found) => found === mark);
  }

  /** Sends `signal` to every process of a tree. */
  signalTree(mark: string, signal: NodeJS.Signals): number {
    let signalled = 0;
    for (const found of this.processesOf(mark)) if (signalSame(found, signal)) signalled += 1;
    return signalled;
  }

  /**
   * SIGKILLs every process with an accepted mark until a pass finds none it has not killed:
   * each pass stops (SIGSTOP) what it found before killing it, so nothing it found forks again,
   * and pauses briefly so a fork already under way shows up in the next pass.
   */
  killMarked(accepts: (mark: string) => boolean, spare: (found: MarkedProcess) => boolean = () => false): number {
    const killed = new Set<string>();
    for (let pass = 0; pass < MAX_PASSES; pass += 1) {
      const fresh = markedProcesses(accepts).filter((found) => !spare(found) && !killed.has(identity(found)));
      if (fresh.length === 0) return killed.size;
      for (const found of fresh) signalSame(found, "SIGSTOP");
      for (const found of fresh) {
        signalSame(found, "SIGKILL");
        killed.add(identity(found));
      }
      pause(PASS_PAUSE_MS);
    }
    this.logger.warn("a harness process tree kept forking while it was being stopped", { killed: killed.size });
    return killed.size;
  }

  /** Ends every process of a tree. */
  killTree(mark: string): number {
    return this.killMarked((found) => found === mark);
  }

  private treesOf(owner: string): HarnessTree[] {
    return [...this.trees.values()].filter((tree) => tree.owner === owner);
  }

  /**
   * Freezes (SIGSTOP) every process of the thread's harness trees outside the harnesses' own
   * process groups: the tools, shells and background loops a harness started, detached or
   * not. The harness itself keeps running, so it can still end its turn and report what it
   * used. Returns how many processes it froze.
   */
  freezeDetached(owner: string): number {
    let frozen = 0;
    for (const tree of this.treesOf(owner)) {
      const seen = new Set(tree.frozen.map(identity));
      for (let pass = 0; pass < MAX_PASSES; pass += 1) {
        const fresh = this.processesOf(tree.mark).filter(
          (found) => found.pgid !== tree.leader && !seen.has(identity(found)),
        );
        if (fresh.length === 0) break;
        for (const found of fresh) {
          seen.add(identity(found));
          if (signalSame(found, "SIGSTOP")) {
            tree.frozen.push(found);
            frozen += 1;
          }
        }
        pause(1);
      }
    }
    return frozen;
  }

  /** Ends (SIGKILL) what {@link freezeDetached} froze, and whatever else of those trees is outside the harness groups. */
  endDetached(owner: string): number {
    let ended = 0;
    for (const tree of this.treesOf(owner)) {
      tree.frozen = [];
      ended += this.killMarked(
        (found) => found === tree.mark,
        (found) => found.pgid === tree.leader,
      );
    }
    return ended;
  }

  /** Lets what {@link freezeDetached} froze go on (the stop that froze it did not commit). */
  thawDetached(owner: string): void {
    for (const tree of this.treesOf(owner)) {
      for (const found of tree.frozen) signalSame(found, "SIGCONT");
      tree.frozen = [];
    }
  }

  /** Ends every process of every tree this host started (shutdown, after the sessions closed). */
  endAll(): number {
    const killed = this.killMarked((found) => found.startsWith(this.hostPrefix));
    this.trees.clear();
    if (killed > 0) this.logger.warn("stopped harness processes still running at shutdown", { processes: killed });
    return killed;
  }

  /**
   * Ends what hosts of this home that are no longer running left behind (a kill -9): processes
   * whose mark names this home and a host process that is gone (or whose pid now names another
   * process). A live host's trees, a one-shot command's on this home included, are left alone.
   * A process of `killedGroups` already has its SIGKILL and may just not be gone yet (a large
   * process takes a moment to die): it is neither signalled again nor counted.
   */
  reapLeftovers(killedGroups: readonly number[] = []): number {
    const groups = new Set(killedGroups);
    const liveHosts = new Map<string, boolean>();
    const leftover = (mark: string): boolean => {
      const [home, pid, start] = mark.split(".");
      if (home !== this.homeKey || pid === undefined || start === undefined) return false;
      if (mark.startsWith(this.hostPrefix)) return false;
      const host = `${pid}.${start}`;
      let alive = liveHosts.get(host);
      if (alive === undefined) {
        alive = processStartTime(Number(pid)) === start;
        liveHosts.set(host, alive);
      }
      return !alive;
    };
    const killed = this.killMarked(leftover, (found) => groups.has(found.pgid));
    if (killed > 0)
      this.logger.warn("stopped harness processes a previous server on this home left behind", { processes: killed });
    return killed;
  }
}
