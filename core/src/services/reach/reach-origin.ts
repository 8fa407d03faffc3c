import { inject, injectable } from "tsyringe";
import { type Engine, EngineToken } from "../../engine/ports.js";
import { activeRun, type ProjectionReader } from "../../engine/run-lifecycle.js";
import type { ReachOrigin } from "../../store/records.js";
import type { Caller } from "../caller.js";
import { CallerContext } from "../caller-context.js";

/**
 * The other environment at the start of the work a thread's run does, or null when the chain
 * began here. Walks the run, then its thread, then up the lineage (a sub-agent's or router
 * child's parent and the parent run that made it, a fork's source) to the root: a mark on any of
 * them (`reachedFrom` on a run or thread, a foreign parent) answers. Bounded by the lineage's
 * depth; a cycle (which the store never writes) ends the walk.
 */
export async function reachOriginOf(
  reader: ProjectionReader,
  threadId: string | null,
  runId: string | null,
): Promise<ReachOrigin | null> {
  const seen = new Set<string>();
  let thread = threadId;
  let run = runId;
  while (thread !== null && !seen.has(thread)) {
    seen.add(thread);
    const runRecord = run === null ? null : await reader.get("run", run);
    if (runRecord?.reachedFrom !== undefined) return runRecord.reachedFrom;
    const record = await reader.get("thread", thread);
    if (record === null) return null;
    if (record.lineage.reachedFrom !== undefined) return record.lineage.reachedFrom;
    if (record.lineage.foreignParent !== undefined)
      return { environment: record.lineage.foreignParent.environmentId, grantId: null };
    thread = record.lineage.parentThreadId;
    run = record.lineage.parentRunId;
  }
  return null;
}

/**
 * Who is at the start of a caller's chain of calls. A linked environment is its own origin (its
 * grant); an agent's is whatever its live run and lineage carry ({@link reachOriginOf}); a client
 * of this machine starts its own chain. Work with an origin never leaves this environment through
 * its links: a grant on this machine is for the environment that holds it, never for whoever that
 * environment lets in (so A, granted here, cannot reach C through this machine's link to C).
 */
@injectable()
export class ReachOrigins {
  constructor(
    @inject(EngineToken) private readonly engine: Engine,
    private readonly callers: CallerContext,
  ) {}

  async of(caller: Caller): Promise<ReachOrigin | null> {
    if (caller.kind === "environment")
      return caller.grant === undefined ? null : { environment: caller.grant.for, grantId: caller.grant.id };
    if (caller.kind !== "agent" || caller.threadId === null) return null;
    // The run it calls from; a call outside its own turn answers for the thread's active run.
    const run = (await this.callers.liveRun(caller)) ?? (await activeRun(this.engine.reader, caller.threadId));
    return await reachOriginOf(this.engine.reader, caller.threadId, run?.id ?? null);
  }
}
