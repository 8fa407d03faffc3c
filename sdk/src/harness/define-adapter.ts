import {
  NO_CAPABILITIES,
  SPECIFICATION_VERSION,
  mergeCapabilities,
  type CapabilityDeclaration,
  type OpenSessionInput,
  type OrchestrationAdapter,
  type ProbeOptions,
  type ProviderCapabilities,
  type ProviderInstanceDescriptor,
  type ProviderSession,
  type ProviderStatus,
} from "@switchyard/spec";

/** A session the adapter shell can start and close. @public */
export interface StartableSession extends ProviderSession {
  /** Starts the harness and opens (or resumes) the conversation. */
  start(): Promise<void>;
}

/** What a provider supplies to {@link defineAdapter}; the shell does the rest. @public */
export interface AdapterDefinition<TSession extends StartableSession> {
  readonly instance: ProviderInstanceDescriptor;
  readonly driverKind: string;
  /** What the instance can do: a declaration (decoded pessimistically once), or a function for capabilities negotiated later. */
  readonly capabilities: CapabilityDeclaration | (() => ProviderCapabilities);
  /**
   * Checks installation, executability, authentication and models; never starts a model turn.
   * With `depth: "inspect"` it also starts no harness and writes nothing into its home.
   */
  probe(options?: ProbeOptions): Promise<ProviderStatus>;
  /**
   * Builds a session (not started yet). `onClosed` must be called once when it closes, so the
   * shell forgets it.
   */
  createSession(input: OpenSessionInput, onClosed: () => void): TSession | Promise<TSession>;
  /** Releases what the instance holds beyond its sessions (a shared server, a cache). */
  dispose?(): Promise<void>;
}

/**
 * The adapter shell every provider repeats otherwise: the spec literal, decoded capabilities,
 * the set of live sessions, `openSession` that starts a session and closes it again when the
 * start fails (so a half-started harness never lingers), and `dispose` that closes every session.
 * @public
 */
export function defineAdapter<TSession extends StartableSession>(
  definition: AdapterDefinition<TSession>,
): OrchestrationAdapter & { readonly sessions: ReadonlySet<TSession> } {
  const sessions = new Set<TSession>();
  const declared =
    typeof definition.capabilities === "function"
      ? null
      : mergeCapabilities(NO_CAPABILITIES, definition.capabilities).capabilities;
  return {
    specificationVersion: SPECIFICATION_VERSION,
    instanceId: definition.instance.id,
    driverKind: definition.driverKind,
    sessions,
    capabilities: () => declared ?? (definition.capabilities as () => ProviderCapabilities)(),
    probe: (options?: ProbeOptions) => definition.probe(options),
    async openSession(input: OpenSessionInput): Promise<ProviderSession> {
      let session: TSession | null = null;
      session = await definition.createSession(input, () => {
        if (session !== null) sessions.delete(session);
      });
      sessions.add(session);
      try {
        await session.start();
      } catch (error) {
        await session.close().catch(() => undefined);
        sessions.delete(session);
        throw error;
      }
      return session;
    },
    async dispose(): Promise<void> {
      await Promise.allSettled([...sessions].map((session) => session.close()));
      sessions.clear();
      await definition.dispose?.();
    },
  };
}
