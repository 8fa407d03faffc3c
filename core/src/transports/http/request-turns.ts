/**
 * Starts request handlers one per event-loop turn, in arrival order.
 *
 * Why: libuv accepts at most one new connection per event-loop turn, and Node's HTTP server
 * runs a request's handler inside the turn that read it. Under load a single turn reads a few
 * hundred ready sockets and ran every one of their handlers, so a turn lasted hundreds of
 * milliseconds and a client opening a connection waited in the kernel's accept queue for one
 * such turn per connection ahead of it: seconds, past 30 s at 200 clients, while each request
 * took a millisecond once read. Queuing the handlers keeps every turn short (reading sockets,
 * accepting one connection, starting one handler), so new connections are accepted as fast as
 * requests are served and every request waits its turn in one FIFO line.
 *
 * Only the synchronous start of a handler is serialized: a handler that awaits (a blocking tool
 * call waiting for events) lets the next one start at once.
 */
export class RequestTurns {
  private readonly queue: (() => void)[] = [];
  private scheduled = false;

  /** Queues `start` to run in a later event-loop turn, after every start queued before it. */
  enqueue(start: () => void): void {
    this.queue.push(start);
    this.schedule();
  }

  /** Starts waiting to run (for diagnostics and tests). */
  get waiting(): number {
    return this.queue.length;
  }

  private schedule(): void {
    if (this.scheduled || this.queue.length === 0) return;
    this.scheduled = true;
    // setImmediate callbacks queued while the check phase runs wait for the next turn, so each
    // turn starts one handler and then polls sockets (and accepts) again.
    setImmediate(this.runOne);
  }

  private readonly runOne = (): void => {
    this.scheduled = false;
    const start = this.queue.shift();
    try {
      start?.();
    } finally {
      this.schedule();
    }
  };
}
