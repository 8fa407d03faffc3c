import { AsyncResource } from "node:async_hooks";

/**
 * Async work on queued items, one item at a time in the order they were queued: an item's work
 * (and every read it awaits) finishes before the next item's starts. Work runs in the async
 * context the stage was made in, not in its callers': a commit listener that queues here does
 * not carry the commit's transaction context into what it awaits (an engine call made there
 * would otherwise count as nested in a transaction that has already ended). An idle stage
 * starts an item at once, in the caller's synchronous turn, up to the item's first await.
 */
export class SerialStage<T> {
  private readonly queue: T[] = [];
  private working = false;
  private readonly scope = new AsyncResource("SerialStage");

  constructor(
    private readonly work: (item: T) => Promise<void>,
    /** Hears what an item's work threw; the stage goes on with the next item. */
    private readonly onError: (error: unknown) => void,
  ) {}

  push(item: T): void {
    this.queue.push(item);
    if (this.working) return;
    this.working = true;
    this.scope.runInAsyncScope(() => void this.drain());
  }

  private async drain(): Promise<void> {
    try {
      for (let item = this.queue.shift(); item !== undefined; item = this.queue.shift()) {
        try {
          await this.work(item);
        } catch (error) {
          this.onError(error);
        }
      }
    } finally {
      // Synchronous from the empty queue to here: the next push starts a new drain.
      this.working = false;
    }
  }
}
