import type { EventStore } from "../ports.js";

/** Queries over the `attempts` projection (a run's turns at its provider) that its typed reads do not cover. */
export class AttemptsTable {
  constructor(private readonly store: EventStore) {}

  /** A turn of the provider session is starting or running (read from the partial index of running turns). */
  async hasRunningTurn(providerSessionId: string): Promise<boolean> {
    return (
      this.store
        .statement("SELECT 1 FROM attempts WHERE status IN ('starting', 'running') AND provider_session_id = ? LIMIT 1")
        .get(providerSessionId) !== undefined
    );
  }
}
