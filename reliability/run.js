// `npm run reliability`: the project's own reliability suite. Runs each scenario in
// reliability/scenarios in order against real `switchyard serve` processes on loopback, each
// bounded in time, prints one line per figure as `figure: value (goal) ok|MISS`, and exits 1
// when any figure misses its goal (or a scenario could not finish). Not part of `npm test`.
//
//   node reliability/run.js [scenario-name…] [--keep] [--seed N]
//
// --keep leaves the temporary homes and logs in place (their folder is printed);
// --seed N (or RELIABILITY_SEED=N) replays the generated inputs of an earlier run: each run
// takes a new seed from the clock and prints it (`seed N`);
// RELIABILITY_VERBOSE=1 prints every attempt and failure instead of the first few.
import { assertBuilt } from "./lib/paths.js";
import { RunContext } from "./lib/run-context.js";
import { chooseSeed } from "./lib/seed.js";
import { withTimeout } from "./lib/wait.js";
import crash from "./scenarios/crash.js";
import unauthorised from "./scenarios/unauthorised.js";
import malformed from "./scenarios/malformed.js";
import load from "./scenarios/load.js";
import sessions from "./scenarios/sessions.js";
import secrets from "./scenarios/secrets.js";

// Secrets last: it reads what every scenario before it left (every file of every home, logs,
// harness homes and argv).
const SCENARIOS = [crash, unauthorised, malformed, load, sessions, secrets];

/** `{ keep, seedFlag, filters }` from argv; exits 2 with what is wrong. */
function parseArgs(argv) {
  const parsed = { keep: false, seedFlag: null, filters: [] };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === "--keep") parsed.keep = true;
    else if (arg === "--seed") parsed.seedFlag = argv[++i] ?? "";
    else if (arg.startsWith("--seed=")) parsed.seedFlag = arg.slice("--seed=".length);
    else if (arg.startsWith("--")) {
      process.stderr.write(`Unknown option ${arg}. Options: --keep, --seed N.\n`);
      process.exit(2);
    } else parsed.filters.push(arg);
  }
  return parsed;
}

const { keep, seedFlag, filters } = parseArgs(process.argv.slice(2));
let seed;
try {
  seed = chooseSeed({ flag: seedFlag });
} catch (error) {
  process.stderr.write(`${error.message}\n`);
  process.exit(2);
}
const chosen = SCENARIOS.filter(
  (scenario) => filters.length === 0 || filters.includes(scenario.name) || scenario.name === "secrets",
);
if (chosen.length === 0) {
  process.stderr.write(
    `No scenario named ${filters.join(", ")}. Scenarios: ${SCENARIOS.map((s) => s.name).join(", ")}.\n`,
  );
  process.exit(2);
}

assertBuilt();
const run = new RunContext({ keep, seed: seed.seed });
process.stdout.write(`reliability: seed ${seed.seed} (from ${seed.source}); replay with --seed ${seed.seed}\n`);
let misses = 0;
const started = Date.now();

/** What a scenario reports through. */
function reporter(scenario) {
  return {
    figure(name, value, goal, ok) {
      if (!ok) misses += 1;
      process.stdout.write(`${name}: ${value} (${goal}) ${ok ? "ok" : "MISS"}\n`);
    },
    note(text) {
      process.stdout.write(`  ${scenario.name}: ${text}\n`);
    },
  };
}

const cleanupOnSignal = () => {
  run.cleanup();
  process.exit(130);
};
process.on("SIGINT", cleanupOnSignal);
process.on("SIGTERM", cleanupOnSignal);

try {
  for (const scenario of chosen) {
    const scenarioStarted = Date.now();
    process.stdout.write(
      `\n== ${scenario.name}: ${scenario.title} (at most ${Math.round(scenario.timeoutMs / 1000)} s)\n`,
    );
    const report = reporter(scenario);
    try {
      await withTimeout(
        scenario.run(run, report),
        scenario.timeoutMs,
        `did not finish within ${scenario.timeoutMs} ms`,
      );
    } catch (error) {
      misses += 1;
      // A scenario that timed out may still be waiting on its servers: stop them so it cannot
      // run on beside the next one.
      run.killTracked();
      process.stdout.write(
        `${scenario.name}: could not finish: ${error instanceof Error ? (error.stack ?? error.message) : String(error)} (goal: finishes) MISS\n`,
      );
    }
    process.stdout.write(`  ${scenario.name}: took ${((Date.now() - scenarioStarted) / 1000).toFixed(1)} s\n`);
  }
} finally {
  if (keep) process.stdout.write(`\nKept homes and logs in ${run.root}\n`);
  run.cleanup();
}
process.stdout.write(
  `\nreliability: ${misses === 0 ? "every figure met its goal" : `${misses} figure(s) missed`} in ${((Date.now() - started) / 1000).toFixed(0)} s\n`,
);
process.exit(misses === 0 ? 0 : 1);
