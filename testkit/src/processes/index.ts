/**
 * Process helpers for driving real harness binaries in tests: locate the native binary behind an
 * npm wrapper, run it in its own process group with a closed or piped stdin, read JSONL output,
 * and kill the whole group.
 */
export type { HarnessBinary, HarnessName, ResolveHarnessBinaryOptions } from "./harness-binary.js";
export { HarnessBinaryNotFoundError, resolveHarnessBinary } from "./harness-binary.js";
export type { HarnessExit, RunHarnessOptions, SpawnHarnessOptions } from "./harness-process.js";
export {
  HarnessProcess,
  killAllHarnessProcesses,
  liveHarnessProcesses,
  runHarness,
  spawnHarness,
} from "./harness-process.js";
export { LineSplitter, parseJsonLines } from "./jsonl.js";
