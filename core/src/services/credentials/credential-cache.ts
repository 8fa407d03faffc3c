/**
 * Credential rows read before, by token hash, kept only while they cannot have changed: every
 * write the registry makes to `mcp_credentials` empties it, and so does any commit by another
 * connection to the database (a `switchyard token revoke` in another process), which SQLite's
 * `PRAGMA data_version` reports. A revoked token therefore fails its very next call, while a
 * token in use is read from SQLite once instead of on every MCP request (the read was the
 * largest share of the endpoint's own cost per call after the transport).
 *
 * The rows are read again when their state may have moved on by time alone: expiry and idleness
 * are checked on every use against the clock, from the cached timestamps.
 */
export class CredentialCache<Row> {
  private readonly rows = new Map<string, Row>();
  private seenVersion: number;
  /** Counts {@link clear}s: a row read before one may be stale, so it is not kept (see {@link set}). */
  private cleared = 0;

  /** Beyond this many credentials the cache starts over (a token is one entry; agents renew theirs). */
  private static readonly MAX_ENTRIES = 10_000;

  /** `dataVersion`: the store's, which changes when another connection commits. */
  constructor(private readonly dataVersion: () => number) {
    this.seenVersion = dataVersion();
  }

  /** The row cached for `tokenHash`, when nothing can have changed it since it was read. */
  get(tokenHash: string): Row | undefined {
    const version = this.dataVersion();
    if (version !== this.seenVersion) {
      this.seenVersion = version;
      this.rows.clear();
      return undefined;
    }
    return this.rows.get(tokenHash);
  }

  /** Where the cache stands now: what a read passes to {@link set} once it has its row. */
  generation(): number {
    return this.cleared;
  }

  /**
   * Keeps a row read since `readAt` (a {@link generation}); not when the cache was cleared in
   * between: the read is awaited, and a write made meanwhile (a revocation) may postdate it.
   */
  set(tokenHash: string, row: Row, readAt: number): void {
    if (readAt !== this.cleared) return;
    if (this.rows.size >= CredentialCache.MAX_ENTRIES) this.rows.clear();
    this.rows.set(tokenHash, row);
  }

  /** Forgets every row: after any write to the credentials. */
  clear(): void {
    this.cleared += 1;
    this.rows.clear();
  }
}
