/**
 * Starts request handlers one per event-loop turn, in arrival order.
 *
 * Why: libuv accepts at most one new connection per event-loop turn, and Node's HTTP server
 * runs a request's handler inside the turn that read it. Under load one turn read a few hundred
 * ready sockets and ran every one of their handlers, so a turn lasted up to seconds, and a client
 * opening a connection waited in the kernel's accept queue for one such turn per connection
 * ahead of it: p99 ~16 s and 30 s client timeouts at 200 clients, while each request took about
 * a millisecond once read. Queuing the handlers keeps every turn short (read the ready sockets,
 * accept one connection, run one handler), so new connections are accepted as fast as requests
 * are served and every request waits in one FIFO line.
 *
 * A handler runs in its turn up to its first wait on I/O or events (its microtasks included);
 * a blocking tool call then waits without holding up the next one.
 */
export class RequestTurns {
  private readonly queue: (() => void)[] = [];
  private scheduled = false;

  /**
   * Starts `start` now when no other start is queued or was made in this turn; otherwise queues
   * it for a later turn, after every start queued before it.
   */
  enqueue(start: () => void): void {
    // An idle server (one client calling back to back) starts the handler in the turn that read
    // its request, as Node would: a turn of its own cost a loop iteration per request. The next
    // start still waits for the next turn (release runs in this turn's check phase and schedules
    // it from there), so a burst is served one handler per turn as before.
    if (!this.scheduled && this.queue.length === 0) {
      this.scheduled = true;
      setImmediate(this.release);
      start();
      return;
    }
    this.queue.push(start);
    this.schedule();
  }

  /** Ends the turn an idle start took: queued starts may go from the next one. */
  private readonly release = (): void => {
    this.scheduled = false;
    this.schedule();
  };

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
