import type { StoredEvent } from "../../store/records.js";
import type { CommittedReader } from "../../engine/projection-reader.js";
import { isPublicEntity, publicEventOf, publicStateOf, type PublicEvent, type PublicState } from "./public-events.js";

/** How many records' public states a projector remembers before it falls back to the log. */
const DEFAULT_CAPACITY = 20_000;

/**
 * Projects internal upserts into public events, in log order. The previous state of a record is
 * the one this projector saw last, or, the first time it meets the record, read from the log
 * (the upsert this event's previous_sequence names). Feed it every event of a
 * range in order, without gaps, and one at a time (await each before the next): a skipped upsert
 * would leave a remembered state stale, and two at once could read a state the other is about to
 * remember.
 */
export class PublicEventProjector {
  private readonly states = new Map<string, PublicState>();

  constructor(
    private readonly reader: CommittedReader,
    private readonly capacity = DEFAULT_CAPACITY,
  ) {}

  async project(event: StoredEvent): Promise<PublicEvent | null> {
    if (!isPublicEntity(event.entity) || event.threadId === null) return null;
    const id = (event.record as { id: string }).id;
    const key = `${event.entity}\u0000${id}`;
    const remembered = this.states.get(key);
    const previous = remembered !== undefined ? remembered : await this.previousFromLog(event);
    const projected = publicEventOf(event, previous);
    const state = publicStateOf(event.entity, event.record);
    if (state !== null) this.remember(key, state);
    return projected;
  }

  private remember(key: string, state: PublicState): void {
    this.states.delete(key);
    this.states.set(key, state);
    if (this.states.size > this.capacity) this.states.delete(this.states.keys().next().value!);
  }

  private async previousFromLog(event: StoredEvent): Promise<PublicState | null> {
    const previous = await this.reader.previousUpsert(event.sequence);
    return previous === null ? null : publicStateOf(event.entity, previous);
  }
}
