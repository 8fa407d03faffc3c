import { inject, injectable } from "tsyringe";
import { type Engine, EngineToken } from "../engine/ports.js";
import { type Logger, LoggerToken } from "../logging/logger.js";
import { threadSearchIndexOf } from "../store/thread-search-index.js";

/**
 * How often the thread search index catches up in the background. A search catches up before
 * it answers anyway; the tick keeps that catch-up short (a few seconds of messages) and builds
 * the index after a migration or a rebuild before anyone searches. With nothing new, a tick is
 * one statement.
 */
export const THREAD_SEARCH_TICK_MS = 5_000;

/** Catches the thread search index up with the event log in the background, from host start. */
@injectable()
export class ThreadSearchIndexer {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    @inject(EngineToken) private readonly engine: Engine,
    @inject(LoggerToken) private readonly logger: Logger,
  ) {}

  /** Catches up now (the build after a migration or a rebuild), then every {@link THREAD_SEARCH_TICK_MS}. */
  start(): void {
    if (this.timer !== null) return;
    void this.tick();
    this.timer = setInterval(() => void this.tick(), THREAD_SEARCH_TICK_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** One catch-up at a time: a tick that finds the last one still running skips its turn. */
  tick(): Promise<void> {
    this.running ??= this.catchUp().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async catchUp(): Promise<void> {
    const store = this.engine.store;
    try {
      if (store.isOpen()) await threadSearchIndexOf(store).catchUpAsync();
    } catch (error) {
      // The index stays behind its watermark and the next tick (or search) tries again.
      if (store.isOpen())
        this.logger.warn("the thread search index could not catch up; it tries again later", {
          error: (error as Error).message,
        });
    }
  }
}
