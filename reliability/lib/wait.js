// Bounded waiting for something observable from outside a server (a row in its database, a
// process to exit): every loop ends by count and by time.

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Re-checks `probe` every `intervalMs` until it returns a truthy value or `timeoutMs` passes; returns the last value. */
export async function until(probe, { timeoutMs, intervalMs = 100 }) {
  const deadline = Date.now() + timeoutMs;
  let value = await probe();
  while (!value && Date.now() < deadline) {
    await sleep(intervalMs);
    value = await probe();
  }
  return value;
}

/** Rejects with `message` when `promise` takes longer than `ms`. */
export function withTimeout(promise, ms, message) {
  let timer;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(message)), ms);
    }),
  ]);
}

/** Runs `worker(item)` over `items` with at most `concurrency` at a time; results keep the input order. */
export async function mapConcurrent(items, concurrency, worker) {
  const results = new Array(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await worker(items[index], index);
    }
  });
  await Promise.all(lanes);
  return results;
}
