import type { AdapterEvent } from "@switchyard/spec";

/** Collects the events a session emits and waits for the ones a test expects. */
export interface AdapterEventRecorder {
  /** Every event, in emission order. */
  readonly events: readonly AdapterEvent[];
  /** Pass as `OpenSessionInput.emit`. */
  readonly emit: (event: AdapterEvent) => void;
  /** Resolves with the first event (already seen or future) that matches; rejects after `timeoutMs`. */
  waitFor<T extends AdapterEvent["type"]>(
    type: T,
    predicate?: (event: Extract<AdapterEvent, { type: T }>) => boolean,
    timeoutMs?: number,
  ): Promise<Extract<AdapterEvent, { type: T }>>;
  /** The events of one turn. */
  ofTurn(turnId: string): AdapterEvent[];
  /** The concatenated `message.delta` text of one turn. */
  textOf(turnId: string): string;
}

/** Creates an {@link AdapterEventRecorder}. */
export function createEventRecorder(): AdapterEventRecorder {
  const events: AdapterEvent[] = [];
  const waiters = new Set<{ match: (event: AdapterEvent) => boolean; resolve: (event: AdapterEvent) => void }>();
  return {
    events,
    emit: (event) => {
      events.push(event);
      for (const waiter of [...waiters]) {
        if (waiter.match(event)) {
          waiters.delete(waiter);
          waiter.resolve(event);
        }
      }
    },
    waitFor(type, predicate, timeoutMs = 15_000) {
      type E = Extract<AdapterEvent, { type: typeof type }>;
      const match = (event: AdapterEvent): boolean =>
        event.type === type && (predicate === undefined || predicate(event as E));
      const seen = events.find(match);
      if (seen !== undefined) return Promise.resolve(seen as E);
      return new Promise<E>((resolve, reject) => {
        const waiter = {
          match,
          resolve: (event: AdapterEvent) => {
            clearTimeout(timer);
            resolve(event as E);
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(
            new Error(`No ${type} event within ${timeoutMs} ms. Seen: ${events.map((event) => event.type).join(", ")}`),
          );
        }, timeoutMs);
        waiters.add(waiter);
      });
    },
    ofTurn: (turnId) => events.filter((event) => "turnId" in event && event.turnId === turnId),
    textOf: (turnId) =>
      events
        .filter(
          (event): event is Extract<AdapterEvent, { type: "message.delta" }> =>
            event.type === "message.delta" && event.turnId === turnId,
        )
        .map((event) => event.text)
        .join(""),
  };
}
