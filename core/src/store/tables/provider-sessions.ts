import type { EventStore } from "../ports.js";

/** Queries over the `provider_sessions` projection that its typed reads do not cover. */
export class ProviderSessionsTable {
  constructor(private readonly store: EventStore) {}

  /** How many provider sessions are open or opening. */
  async countOpen(): Promise<number> {
    return (
      this.store.statement("SELECT COUNT(*) AS n FROM provider_sessions WHERE status IN ('opening', 'open')").get() as {
        n: number;
      }
    ).n;
  }
}
