import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { injectable } from "tsyringe";
import { Lifecycle, type DependencyContainer } from "tsyringe";
import type { McpEndpointGrant } from "../../src/spec/index.js";
import type { Logger } from "../../src/logging/logger.js";
import type { ProviderSessionScope } from "../../src/engine/mcp-grant-issuer.js";
import { McpSessionRegistry, type CredentialCapability } from "../../src/services/credentials/mcp-session-registry.js";
import { startServer, type RunningServer } from "../../src/transports/http/switchyard-server.js";
import type { TlsIdentity } from "../../src/transports/http/tls-identity.js";
import { releaseGate } from "@switchyard/testkit/scripted-provider";
import { connectMcp } from "./mcp-client.js";
import { scriptedInstance, startTestHost, type TestHost } from "./test-host.js";

/** The real credential registry, remembering every provider-session grant it issued (tests only). */
@injectable()
export class RecordingRegistry extends McpSessionRegistry {
  readonly grants: { threadId: string; providerSessionId: string; grant: McpEndpointGrant }[] = [];
  override async issue(scope: ProviderSessionScope): Promise<McpEndpointGrant | null> {
    const grant = await super.issue(scope);
    if (grant !== null)
      this.grants.push({ threadId: scope.threadId, providerSessionId: scope.providerSessionId, grant });
    return grant;
  }
}

let gateCounter = 0;

/** A host, its MCP server, and ways to act as an agent in a thread or as an outside client. */
export class McpLab {
  private readonly clients: Client[] = [];
  constructor(
    readonly t: TestHost,
    readonly server: RunningServer,
    readonly projectId: string,
  ) {}

  static async start(
    options: {
      providers?: (dirs: { home: string; gateDir: string }) => unknown[];
      /** Plugin folders to load (default: the scripted provider's). */
      plugins?: string[];
      server?: Record<string, unknown>;
      budgets?: Record<string, unknown>;
      pricing?: Record<string, unknown>;
      scheduling?: Record<string, unknown>;
      reach?: Record<string, unknown>;
      workspaces?: Record<string, unknown>;
      profiles?: unknown[];
      overrides?: (container: DependencyContainer) => void;
      logger?: Logger;
      /** Where to listen instead of 127.0.0.1 (another loopback address; TLS), as `serve --host`. */
      listen?: { host: string; tls?: TlsIdentity | null };
    } = {},
  ): Promise<McpLab> {
    const t = await startTestHost({
      // The server starts the host once the MCP endpoint is wired.
      start: false,
      providers: options.providers ?? defaultProviders,
      ...(options.plugins ? { plugins: options.plugins } : {}),
      overrides: (container) => {
        container.register(
          McpSessionRegistry,
          { useClass: RecordingRegistry },
          { lifecycle: Lifecycle.ContainerScoped },
        );
        options.overrides?.(container);
      },
      ...(options.server ? { server: options.server } : {}),
      ...(options.budgets ? { budgets: options.budgets } : {}),
      ...(options.pricing ? { pricing: options.pricing } : {}),
      ...(options.scheduling ? { scheduling: options.scheduling } : {}),
      ...(options.reach ? { reach: options.reach } : {}),
      ...(options.workspaces ? { workspaces: options.workspaces } : {}),
      ...(options.profiles ? { profiles: options.profiles } : {}),
      ...(options.logger ? { logger: options.logger } : {}),
    });
    const server = await startServer(t.host, { port: 0, ...(options.listen ? { listen: options.listen } : {}) });
    const project = await t.host.projects.add(t.workspace, "main");
    return new McpLab(t, server, project.id);
  }

  get host() {
    return this.t.host;
  }

  get registry(): RecordingRegistry {
    return this.host.container.resolve(McpSessionRegistry) as RecordingRegistry;
  }

  /** An outside client with the given scopes. */
  async client(capabilities: CredentialCapability[] = ["orchestration:operate"]): Promise<Client> {
    const { token } = this.registry.issueClientToken({ ttlMs: 3_600_000, capabilities });
    const client = await connectMcp(this.server.mcpUrl, token);
    this.clients.push(client);
    return client;
  }

  /** The token of a thread's newest provider session. */
  async tokenFor(threadId: string): Promise<string> {
    const grant = await this.host.waiter.waitFor(
      () => [...this.registry.grants].reverse().find((g) => g.threadId === threadId) ?? null,
      { timeoutMs: 10_000 },
    );
    if (grant === null) throw new Error(`no credential was issued for ${threadId}`);
    return grant.grant.token;
  }

  /** An MCP client acting as the agent of a thread (its provider session's own credential). */
  async agent(threadId: string): Promise<Client> {
    const client = await connectMcp(this.server.mcpUrl, await this.tokenFor(threadId));
    this.clients.push(client);
    return client;
  }

  /** Waits until a thread's current turn reached its provider. */
  async waitForLiveTurn(threadId: string): Promise<void> {
    const live = await this.host.waiter.waitFor(
      () =>
        this.host.store.select("attempt", "thread_id = ? AND status = 'running'", [threadId]).length > 0 ? true : null,
      { timeoutMs: 10_000 },
    );
    if (live === null) throw new Error(`thread ${threadId} never got a live turn`);
  }

  /**
   * A thread whose run stays live (held at a gate) so its agent can act: returns the thread,
   * the agent's MCP client and a release function.
   */
  async liveAgent(
    options: {
      instance?: string;
      runtimeMode?: "approval-required" | "auto-accept-edits" | "full-access";
      interactionMode?: "plan" | "default";
      projectId?: string;
      title?: string;
    } = {},
  ) {
    const gate = `live-${++gateCounter}`;
    const { thread } = await this.host.threads.createThread({
      projectId: options.projectId ?? this.projectId,
      providerInstanceId: options.instance ?? "alpha",
      runtimeMode: options.runtimeMode ?? "full-access",
      interactionMode: options.interactionMode ?? "default",
      title: options.title ?? null,
      prompt: `@@gate ${gate} @@reply parent-done`,
      createdBy: "user",
      creationSource: "cli",
    });
    await this.waitForLiveTurn(thread.id);
    const client = await this.agent(thread.id);
    return { threadId: thread.id, client, release: () => releaseGate(this.t.gateDir, gate) };
  }

  /** A new live turn (held at a gate) on an existing thread, started by an explicit send. */
  async liveAgentOn(threadId: string) {
    const gate = `live-${++gateCounter}`;
    await this.host.threads.send({
      threadId,
      text: `@@gate ${gate} @@reply again-done`,
      mode: "queue",
      createdBy: "user",
      creationSource: "cli",
    });
    await this.host.waiter.waitFor(
      () =>
        this.host.store.select("run", "thread_id = ? AND status = 'running'", [threadId]).length > 0 ? true : null,
      { timeoutMs: 10_000 },
    );
    await this.waitForLiveTurn(threadId);
    const client = await this.agent(threadId);
    return { threadId, client, release: () => releaseGate(this.t.gateDir, gate) };
  }

  release(gate: string): void {
    releaseGate(this.t.gateDir, gate);
  }

  async stop(): Promise<void> {
    for (const client of this.clients) await client.close().catch(() => undefined);
    await this.server.close();
    await this.t.cleanup();
  }
}

/**
 * Two scripted providers with different capabilities, plus instances that cannot run work:
 * - alpha: everything (native steer, interrupt, resume, fork, approvals, questions, all modes)
 * - beta: no native steer (interrupt-and-restart instead), two runtime modes, twelve models
 * - gamma: disabled; delta: not installed
 */
export function defaultProviders({ home, gateDir }: { home: string; gateDir: string }): unknown[] {
  const stateDir = `${home}/scripted-state`;
  return [
    scriptedInstance("alpha", { gateDir, stateDir, models: ["alpha-large", "alpha-small"] }),
    scriptedInstance("beta", {
      gateDir,
      stateDir,
      models: Array.from({ length: 12 }, (_, i) => `beta-${i + 1}`),
      capabilities: {
        sessions: { resume: true },
        turns: {
          interrupt: true,
          steeringByInterruptRestart: true,
          terminalStatusQuality: "strong",
          emitsTurnStarted: true,
        },
        tools: { mcp: { http: true } },
        runtimeRequests: { userInputQuestions: true },
        identity: { nativeThreadIds: "strong" },
        runtimeModes: ["approval-required", "auto-accept-edits"],
        interactionModes: ["plan", "default"],
      },
    }),
    scriptedInstance("gamma", { gateDir }, { enabled: false }),
    scriptedInstance("delta", { gateDir, status: { installed: false } }),
  ];
}
