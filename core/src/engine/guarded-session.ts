import {
  UnsupportedCapabilityError,
  type CapabilityName,
  type ForkInput,
  type InterruptInput,
  type McpEndpointGrant,
  type ProviderCapabilities,
  type ProviderSession,
  type RuntimeRequestResponse,
  type SteerInput,
  type SteerOutcome,
  type ThreadSnapshot,
  type TurnInput,
} from "../spec/index.js";
import { runOwnedBy } from "../plugin-host/process-owner.js";

/**
 * The only way host code reaches a session's optional methods: each call checks the declared
 * capability first and fails with `unsupported_capability`, never a silent no-op, when the
 * capability is false or the session lacks the method (an optional method exists only when its
 * capability is declared, so an absent one is the normal way to say "cannot").
 */
export class GuardedSession {
  constructor(
    private readonly inner: ProviderSession,
    /** The provider's capabilities as the registry decoded them (never the adapter's raw record). */
    private readonly declared: () => ProviderCapabilities,
    private readonly providerName: string,
    /** The thread it serves: processes its calls start are that thread's (process-owner.ts). */
    private readonly threadId: string | null = null,
  ) {}

  /** Runs a call to the adapter on behalf of the session's thread. */
  private owned<T>(call: () => T): T {
    return this.threadId === null ? call() : runOwnedBy(this.threadId, call);
  }

  /** What the session's provider declared it can do, as decoded by the registry. */
  capabilities(): ProviderCapabilities {
    return this.declared();
  }

  get resumeCursor(): string | null {
    return this.inner.resumeCursor;
  }

  private require(capability: CapabilityName, declared: boolean, method: unknown): void {
    if (!declared || typeof method !== "function") throw new UnsupportedCapabilityError(capability, this.providerName);
  }

  startTurn(input: TurnInput): Promise<{ readonly providerTurnId?: string }> {
    return this.owned(() => this.inner.startTurn(input));
  }

  steerTurn(input: SteerInput): Promise<void | SteerOutcome> {
    this.require("turns.activeSteering", this.declared().turns.activeSteering, this.inner.steerTurn);
    return this.owned(() => this.inner.steerTurn!(input));
  }

  interruptTurn(input: InterruptInput): Promise<void> {
    this.require("turns.interrupt", this.declared().turns.interrupt, this.inner.interruptTurn);
    return this.owned(() => this.inner.interruptTurn!(input));
  }

  forkThread(input: ForkInput): Promise<{ readonly resumeCursor: string }> {
    const caps = this.declared();
    this.require("threads.fork", caps.threads.fork, this.inner.forkThread);
    if (input.afterTurnId !== undefined)
      this.require("threads.forkFromTurn", caps.threads.forkFromTurn, this.inner.forkThread);
    return this.owned(() => this.inner.forkThread!(input));
  }

  respondToRuntimeRequest(requestId: string, response: RuntimeRequestResponse): Promise<void> {
    const caps = this.declared().runtimeRequests;
    const declared =
      response.kind === "approval"
        ? caps.approvals
        : response.kind === "user_input"
          ? caps.userInputQuestions
          : caps.approvals || caps.userInputQuestions;
    this.require(
      response.kind === "approval" ? "runtimeRequests.approvals" : "runtimeRequests.userInputQuestions",
      declared,
      this.inner.respondToRuntimeRequest,
    );
    return this.owned(() => this.inner.respondToRuntimeRequest!(requestId, response));
  }

  readSnapshot(): Promise<ThreadSnapshot> {
    this.require("threads.readSnapshot", this.declared().threads.readSnapshot, this.inner.readSnapshot);
    return this.owned(() => this.inner.readSnapshot!());
  }

  updateMcpGrant(grant: McpEndpointGrant): Promise<void> {
    this.require("tools.mcpGrantUpdate", this.declared().tools.mcpGrantUpdate, this.inner.updateMcpGrant);
    return this.owned(() => this.inner.updateMcpGrant!(grant));
  }

  close(): Promise<void> {
    return this.owned(() => this.inner.close());
  }
}
