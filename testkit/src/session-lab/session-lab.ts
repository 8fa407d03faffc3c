import type { OpenSessionInput, OrchestrationAdapter, PluginContext, ProviderSession } from "@switchyard/sdk";
import { createEventRecorder, type AdapterEventRecorder } from "../acp-agent/event-recorder.js";
import { createAcpTestContext, type AcpTestContext } from "../acp-agent/process-helpers.js";
import type { HarnessHome } from "../harness-homes/sandbox.js";
import { openSessionInput } from "./session-inputs.js";

/** A session an adapter test opened, the recorder its events go to, and the input it was opened with. */
export interface RecordedSession<TSession extends ProviderSession = ProviderSession> {
  readonly session: TSession;
  readonly events: AdapterEventRecorder;
  readonly input: OpenSessionInput;
}

/**
 * Opens a session on `adapter` in `cwd` with the defaults of {@link openSessionInput} (laid
 * under `overrides`); its events go to a fresh recorder. `TSession` is the plugin's own session
 * type, for tests that reach past the spec's interface.
 */
export async function openRecordedSession<TSession extends ProviderSession = ProviderSession>(
  adapter: OrchestrationAdapter,
  cwd: string,
  overrides: Partial<OpenSessionInput> = {},
): Promise<RecordedSession<TSession>> {
  const events = createEventRecorder();
  const input = openSessionInput(cwd, events.emit, overrides);
  return { session: (await adapter.openSession(input)) as TSession, events, input };
}

/** What a plugin's lab gives {@link createSessionLab}: its harness home, its model's stand-in, and how it builds its adapter. */
export interface SessionLabFixtures<TAdapter extends OrchestrationAdapter, THome extends HarnessHome> {
  /** The harness home: sessions run in its `cwd`; the lab removes it last. */
  readonly home: THome;
  /** The model's stand-in (the scripted model server, a fake backend), closed after the adapters and before the home. */
  readonly standIn: { close(): Promise<void> };
  /** Builds the adapter under test on the lab's plugin context; called again by {@link SessionLab.restartAdapter}. */
  createAdapter(context: PluginContext): TAdapter;
}

/** One adapter under test, with its home, its plugin context and the sessions it opened. */
export interface SessionLab<
  TSession extends ProviderSession,
  TAdapter extends OrchestrationAdapter,
  THome extends HarnessHome,
> {
  readonly home: THome;
  /** The plugin context: real process groups, a recording logger, a temporary home. */
  readonly ctx: AcpTestContext;
  /** The newest adapter (a restart replaces it). */
  readonly adapter: TAdapter;
  /** Opens a session on the newest adapter; its events go to the returned recorder. */
  open(overrides?: Partial<OpenSessionInput>): Promise<RecordedSession<TSession>>;
  /** A new adapter on the same context and plugin directories (what a restarted host builds); the old one lives until `dispose`. */
  restartAdapter(): TAdapter;
  /** Closes every session, disposes every adapter and the context, closes the stand-in and removes the home. */
  dispose(): Promise<void>;
}

/**
 * The session lab every plugin's adapter tests share: the plugin's lab calls it with its own
 * fixtures (home, stand-in, adapter factory), as the conformance suite is registered by a
 * function the plugin calls. Nothing of the adapter is replaced; the context starts real
 * process groups.
 */
export async function createSessionLab<
  TSession extends ProviderSession = ProviderSession,
  TAdapter extends OrchestrationAdapter = OrchestrationAdapter,
  THome extends HarnessHome = HarnessHome,
>(fixtures: SessionLabFixtures<TAdapter, THome>): Promise<SessionLab<TSession, TAdapter, THome>> {
  const ctx = await createAcpTestContext();
  const adapters = [fixtures.createAdapter(ctx.context)];
  const sessions: ProviderSession[] = [];
  const newest = () => adapters[adapters.length - 1]!;
  return {
    home: fixtures.home,
    ctx,
    get adapter() {
      return newest();
    },
    async open(overrides = {}) {
      const opened = await openRecordedSession<TSession>(newest(), fixtures.home.cwd, overrides);
      sessions.push(opened.session);
      return opened;
    },
    restartAdapter() {
      adapters.push(fixtures.createAdapter(ctx.context));
      return newest();
    },
    async dispose() {
      for (const session of sessions) await session.close();
      for (const adapter of adapters) await adapter.dispose?.();
      await ctx.dispose();
      await fixtures.standIn.close();
      await fixtures.home.cleanup();
    },
  };
}
