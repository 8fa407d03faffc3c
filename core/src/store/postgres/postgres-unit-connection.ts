import type { PostgresClient, PostgresPool } from "./postgres-pool.js";

/**
 * The connection of one unit of work, taken from the pool and BEGUN at the unit's first flush
 * (a read, a savepoint or the commit), not when the unit starts: until it writes, a unit that
 * awaits (a provider's answer) holds no connection, and one that wrote nothing commits without
 * a round trip. Its body starts in its caller's turn, as SQLite's does.
 */
export class UnitConnection {
  #client: Promise<PostgresClient> | null = null;
  #released = false;

  constructor(private readonly pool: PostgresPool) {}

  /** The unit's connection, inside its transaction. */
  client(): Promise<PostgresClient> {
    return (this.#client ??= this.begin());
  }

  private async begin(): Promise<PostgresClient> {
    const client = await this.pool.connect();
    try {
      await client.query("BEGIN");
    } catch (error) {
      this.#released = true;
      client.release(true);
      throw error;
    }
    return client;
  }

  /** Commits what the unit wrote (nothing to do if it never began). */
  async commit(): Promise<void> {
    if (this.#client !== null) await (await this.#client).query("COMMIT");
  }

  /**
   * Rolls the unit back and hands its connection back to the pool; a connection that cannot
   * roll back is gone (the server rolled the transaction back), and is dropped.
   */
  async rollBackAndRelease(): Promise<void> {
    const client = await this.#client?.catch(() => null);
    if (client === null || client === undefined) return;
    let broken = false;
    await client.query("ROLLBACK").catch(() => (broken = true));
    this.release(client, broken);
  }

  /** Hands the connection back after a commit. */
  async release(): Promise<void>;
  release(client: PostgresClient, broken: boolean): void;
  release(client?: PostgresClient, broken = false): void | Promise<void> {
    if (client === undefined) return this.#client?.then((opened) => this.release(opened, false));
    if (this.#released) return;
    this.#released = true;
    client.release(broken);
  }

  /**
   * Ends the connection under a unit still open (its store is closing): the server rolls the
   * transaction back, and the unit's next statement fails.
   */
  async abandon(): Promise<void> {
    const client = await this.#client?.catch(() => null);
    if (client === null || client === undefined) return;
    this.release(client, true);
  }
}
