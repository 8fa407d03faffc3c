import type { AdapterEvent, PluginLogger } from "@switchyard/spec";

/**
 * The one way a session reports events: after `close()` nothing more is reported (the spec says
 * calls after close are ignored), and a host sink that throws is logged instead of breaking the
 * harness's read loop.
 * @public
 */
export class EventSink {
  #closed = false;

  constructor(
    private readonly sink: (event: AdapterEvent) => void,
    private readonly logger: PluginLogger,
  ) {}

  /** Reports one event, unless the sink was closed. */
  readonly emit = (event: AdapterEvent): void => {
    if (this.#closed) return;
    try {
      this.sink(event);
    } catch (error) {
      this.logger.error("The host's event sink threw", {
        type: event.type,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  };

  /** Reports nothing more. */
  close(): void {
    this.#closed = true;
  }

  get closed(): boolean {
    return this.#closed;
  }
}
