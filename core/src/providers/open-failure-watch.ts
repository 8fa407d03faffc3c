import type { OpenSessionInput, OrchestrationAdapter, ProviderSession } from "../spec/index.js";

/**
 * The adapter with `onOpenFailed` called whenever `openSession` throws (the error still
 * reaches the caller), so the host can re-check a provider that broke since its last probe.
 * Everything else is the adapter's own.
 */
export function watchOpenFailures(adapter: OrchestrationAdapter, onOpenFailed: (error: unknown) => void): OrchestrationAdapter {
  const openSession = async (input: OpenSessionInput): Promise<ProviderSession> => {
    try {
      return await adapter.openSession(input);
    } catch (error) {
      onOpenFailed(error);
      throw error;
    }
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
