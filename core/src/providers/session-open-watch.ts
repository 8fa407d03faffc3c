import type { OpenSessionInput, OrchestrationAdapter, ProviderSession } from "../spec/index.js";

/** What the host wants to hear about an adapter's `openSession` calls. */
export interface SessionOpenObserver {
  /**
   * A session opened. The adapter may have negotiated new capabilities on the way (an ACP
   * agent advertises its own at `initialize`), so the host decodes them again.
   */
  readonly opened: () => void;
  /** `openSession` threw (the error still reaches the caller): the harness may have broken since its last probe. */
  readonly failed: (error: unknown) => void;
}

/** The adapter with `observer` told how each `openSession` ended. Everything else is the adapter's own. */
export function watchSessionOpens(adapter: OrchestrationAdapter, observer: SessionOpenObserver): OrchestrationAdapter {
  const openSession = async (input: OpenSessionInput): Promise<ProviderSession> => {
    let session: ProviderSession;
    try {
      session = await adapter.openSession(input);
    } catch (error) {
      observer.failed(error);
      throw error;
    }
    observer.opened();
    return session;
  };
  return new Proxy(adapter, {
    get(target, property) {
      if (property === "openSession") return openSession;
      const value: unknown = Reflect.get(target, property);
      // Methods run against the adapter itself, so its private fields stay reachable.
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
