/**
 * Reads of one key (a thread, a task, the project list), one at a time, whose last answer is
 * never older than the last request for it.
 *
 * A burst of events for one thread costs at most two reads: the one in flight and one more.
 * Handing back the read in flight instead would lose an update: a read the server answered
 * before a `run.finished` would stay on screen after it, "running" for good.
 */
export function freshReads<K>(read: (key: K) => Promise<void>): (key: K) => Promise<void> {
  const inFlight = new Map<K, Promise<void>>();
  const again = new Map<K, Promise<void>>();

  const start = (key: K): Promise<void> => {
    const reading = read(key)
      .catch(() => undefined)
      .finally(() => inFlight.delete(key));
    inFlight.set(key, reading);
    return reading;
  };

  return (key: K) => {
    const reading = inFlight.get(key);
    if (reading === undefined) return start(key);
    // A read already waits for this one: it starts after every request made so far.
    const queued = again.get(key);
    if (queued !== undefined) return queued;
    const next = reading.then(() => {
      again.delete(key);
      return start(key);
    });
    again.set(key, next);
    return next;
  };
}

/**
 * Orders the answers of reads that may overlap (each pushed change starts one): `ask()` before a
 * read gives a check to call on its answer, true unless a read asked later was already shown.
 * Every answer newer than the one on screen is shown, so a steady stream of changes still
 * updates the page; an older one arriving late is dropped instead of undoing a newer one.
 */
export function newestAnswers(): () => () => boolean {
  let asked = 0;
  let shown = 0;
  return () => {
    const mine = ++asked;
    return () => {
      if (mine < shown) return false;
      shown = mine;
      return true;
    };
  };
}
