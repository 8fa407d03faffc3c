/**
 * Query results read outside transactions (the records' JSON texts), kept while nothing can have
 * changed them, so a read repeated between writes (an agent polling `t3_thread_list`, a page of
 * a listing that sorts) costs one tiny statement instead of the query. Under
 * bench/mcp.bench.js the listing's page query was the largest share of a tool call's own cost.
 *
 * A result is reused only when all three still hold since it was read:
 * - no transaction of this connection has run (each one may write: the store's writes all go
 *   through one);
 * - `total_changes()` is the same: no row changed on this connection outside one either (a raw
 *   `db.exec`);
 * - `PRAGMA data_version` is the same: no other connection committed (another process, or the
 *   CLI revoking a token). The store reads it once per event-loop turn (`Store.dataVersion`),
 *   so a commit elsewhere during a turn is seen from the next one.
 * The two are read on a candidate reuse only. A result is
 * stamped with the last stamp read before it, which can only be older than what the query saw:
 * at worst a later reuse is refused and the query runs again, never a stale answer.
 */
export class CommittedReads {
  private readonly results = new Map<string, CommittedResult>();
  private heldChars = 0;
  /** How many transactions have started: a result read before one is never reused after it. */
  private epoch = 0;
  /** The last stamp read (total changes and data version), null before the first. */
  private lastStamp: string | null = null;

  /** Beyond this many results, or this many characters of them, the cache starts over. */
  private static readonly MAX_RESULTS = 512;
  private static readonly MAX_CHARS = 4_000_000;

  /** `readStamp`: this connection's total changes and data version, as one string. */
  constructor(private readonly readStamp: () => string) {}

  /** A transaction is starting: results read before it may no longer hold. */
  transactionStarted(): void {
    this.epoch += 1;
  }

  /** The texts remembered under `key`, when nothing can have changed them since they were read. */
  get(key: string): readonly string[] | undefined {
    const result = this.results.get(key);
    if (result === undefined || result.epoch !== this.epoch) return undefined;
    // Read even for a result stamped with none, so that the one read again next is.
    const stamp = this.readStamp();
    this.lastStamp = stamp;
    return stamp === result.stamp ? result.texts : undefined;
  }

  /** Remembers what a query outside a transaction just read. */
  remember(key: string, texts: readonly string[]): void {
    let chars = 0;
    for (const text of texts) chars += text.length;
    if (chars > CommittedReads.MAX_CHARS / 8) return;
    if (this.results.size >= CommittedReads.MAX_RESULTS || this.heldChars + chars > CommittedReads.MAX_CHARS) {
      this.results.clear();
      this.heldChars = 0;
    }
    const previous = this.results.get(key);
    if (previous !== undefined) this.heldChars -= previous.chars;
    this.results.set(key, { texts, chars, epoch: this.epoch, stamp: this.lastStamp });
    this.heldChars += chars;
  }
}

interface CommittedResult {
  readonly texts: readonly string[];
  readonly chars: number;
  readonly epoch: number;
  readonly stamp: string | null;
}
