// The seed of the suite's generated inputs. Each run takes a new one from the clock, so runs
// over time cover more inputs than one fixed seed would; a run that found something is replayed
// with the seed it printed: `--seed N` on the command line, or RELIABILITY_SEED=N.

const MAX_SEED = 2 ** 32 - 1;

/** Reads a seed the user gave; throws with what to do when it is not a 32-bit unsigned integer. */
export function parseSeed(text, from) {
  const value = /^\d{1,10}$/.test(String(text).trim()) ? Number(String(text).trim()) : Number.NaN;
  if (!Number.isSafeInteger(value) || value > MAX_SEED) {
    throw new Error(
      `${from} is ${JSON.stringify(text)}: a seed is a whole number from 0 to ${MAX_SEED}, as a run prints it (seed N).`,
    );
  }
  return value;
}

/**
 * The run's seed and where it came from: `--seed` first, then RELIABILITY_SEED, else the clock
 * (milliseconds, folded into 32 bits: two runs a millisecond apart get different seeds).
 */
export function chooseSeed({ flag = null, env = process.env.RELIABILITY_SEED, now = Date.now() } = {}) {
  if (flag !== null) return { seed: parseSeed(flag, "--seed"), source: "--seed" };
  if (env !== undefined && env !== "") return { seed: parseSeed(env, "RELIABILITY_SEED"), source: "RELIABILITY_SEED" };
  return { seed: now % (MAX_SEED + 1), source: "the clock" };
}
