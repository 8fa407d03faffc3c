/**
 * One level of an open asynchronous transaction (`Store.transactionAsync`): the outermost one
 * (BEGIN IMMEDIATE … COMMIT) or a savepoint inside it. The store's AsyncLocalStorage holds the
 * level a piece of code runs in, which is how the store tells the transaction's own code (which
 * may read its uncommitted rows, and write) from everything else on the event loop.
 */
export class AsyncTransactionLevel {
  private ended = false;
  /** Nested calls made from this level, one at a time, in call order (each a savepoint). */
  readonly nested = new FifoMutex();

  /** `parent`: the level this one is a savepoint of; null for the outermost. */
  constructor(readonly parent: AsyncTransactionLevel | null) {}

  /**
   * Whether the level and every level around it are still open: code that outlives its level (a
   * timer it set, a nested call its work did not await) is outside.
   */
  get open(): boolean {
    return !this.ended && (this.parent === null || this.parent.open);
  }

  end(): void {
    this.ended = true;
  }

  /** 0 for the outermost level, 1 for a savepoint in it… */
  get depth(): number {
    return this.parent === null ? 0 : this.parent.depth + 1;
  }
}

/**
 * Runs async work one at a time, first come first served. Work that finds nothing held or
 * queued starts at once, in its caller's synchronous turn (no hop through the microtask queue),
 * so a free mutex costs a counter and a promise.
 */
export class FifoMutex {
  private tail: Promise<void> = Promise.resolve();
  /** Work holding the mutex or queued for it. */
  private waiting = 0;

  run<T>(work: () => Promise<T>): Promise<T> {
    const previous = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((resolve) => (release = resolve));
    this.waiting += 1;
    const held = async (): Promise<T> => {
      try {
        return await work();
      } finally {
        this.waiting -= 1;
        release();
      }
    };
    // Alone: every earlier holder has released, so `previous` is settled.
    return this.waiting === 1 ? held() : previous.then(held);
  }

  /** Whether work holds the mutex or waits for it. */
  get busy(): boolean {
    return this.waiting > 0;
  }
}

/**
 * Code the store cannot serve while an asynchronous transaction is open on its connection: a
 * write (or a synchronous `transaction()`) from outside that transaction would join it, and one
 * from a level of it that has a savepoint open would land in that savepoint. An internal error:
 * it names a caller that must become part of the transaction (await `transactionAsync`) or wait
 * for it, never a user's mistake.
 */
export class AsyncTransactionConflictError extends Error {
  readonly code = "store_async_transaction_open";

  constructor(operation: string, reason: string, cause?: unknown) {
    super(`Store.${operation} refused: ${reason}`, cause === undefined ? undefined : { cause });
    this.name = "AsyncTransactionConflictError";
  }
}
