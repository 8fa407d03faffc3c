import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { createServer, Socket, type Server } from "node:net";
import { join } from "node:path";
import { SCRIPTED_PROVIDER_PLUGIN_DIR } from "@switchyard/testkit/scripted-provider";
import { runCli } from "./cli.js";
import { ServeProcess, writeHomeConfig, type ServeEndpoint } from "./serve-process.js";

/** A free TCP port on `host` (bound and closed at once). */
export async function freePort(host = "127.0.0.1"): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, host, resolve);
  });
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * One Switchyard environment for tests across environments: its own home (config with a
 * scripted provider that resumes across restarts, a project), served by a real `switchyard
 * serve` process on a fixed port, so a restart after kill -9 answers at the same address.
 */
export class ReachEnvironment {
  serve: ServeProcess | null = null;
  endpoint: ServeEndpoint | null = null;

  private constructor(
    readonly name: string,
    readonly home: string,
    readonly gateDir: string,
    readonly workspace: string,
    readonly port: number,
    readonly projectId: string,
    /** The loopback address it serves on (`serve --host`), one per environment, as machines have. */
    readonly host: string,
  ) {}

  static async create(root: string, name: string, options: { host?: string } = {}): Promise<ReachEnvironment> {
    const host = options.host ?? "127.0.0.1";
    const home = join(root, name, "home");
    const gateDir = join(root, name, "gates");
    const stateDir = join(root, name, "state");
    const workspace = mkdtempSync(join(root, `${name}-ws-`));
    mkdirSync(gateDir, { recursive: true });
    const port = await freePort(host);
    writeHomeConfig(home, {
      plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR],
      providers: [{ id: "alpha", driver: "scripted", options: { gateDir, stateDir } }],
    });
    const added = await runCli(["project", "add", workspace, "--json", "--home", home]);
    if (added.code !== 0) throw new Error(`project add failed: ${added.stderr}`);
    const projectId = (JSON.parse(added.stdout) as { id: string }).id;
    return new ReachEnvironment(name, home, gateDir, workspace, port, projectId, host);
  }

  get url(): string {
    return `http://${this.host}:${this.port}`;
  }

  /** Issues a grant here (the CLI) and returns its secret. */
  async issueGrant(
    forName: string,
    verbs: string,
    maxRuntimeMode = "full-access",
  ): Promise<{ id: string; secret: string }> {
    const issued = await runCli([
      "grant",
      "issue",
      "--for",
      forName,
      "--projects",
      "*",
      "--verbs",
      verbs,
      "--max-runtime-mode",
      maxRuntimeMode,
      "--json",
      "--home",
      this.home,
    ]);
    if (issued.code !== 0) throw new Error(`grant issue failed: ${issued.stderr}`);
    return JSON.parse(issued.stdout) as { id: string; secret: string };
  }

  /** Links `other` here under `name` with a secret (through a 0600 file, never argv). */
  async link(name: string, url: string, secret: string): Promise<void> {
    const file = join(this.home, "..", `${name}.secret`);
    writeFileSync(file, secret, { mode: 0o600 });
    const added = await runCli(["link", "add", name, url, "--secret", `@${file}`, "--home", this.home]);
    if (added.code !== 0) throw new Error(`link add failed: ${added.stderr}`);
  }

  async start(): Promise<ServeEndpoint> {
    this.serve = ServeProcess.start(this.home, ["--host", this.host, "--port", String(this.port)]);
    this.endpoint = await this.serve.ready;
    return this.endpoint;
  }

  async kill9(): Promise<void> {
    await this.serve?.kill9();
    this.serve = null;
  }

  /** A client token (the CLI) for the MCP endpoint. */
  async clientToken(): Promise<string> {
    const issued = await runCli(["token", "issue", "--json", "--max-runtime-mode", "full-access", "--home", this.home]);
    if (issued.code !== 0) throw new Error(`token issue failed: ${issued.stderr}`);
    return (JSON.parse(issued.stdout) as { token: string }).token;
  }
}

/**
 * A TCP forwarder in front of a server, which a test can cut (its port closed, every connection
 * dropped) and heal (listening again on the same port): a network cut between two environments.
 */
export class TcpLink {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();

  private constructor(
    readonly port: number,
    private readonly targetPort: number,
    private readonly targetHost: string,
  ) {}

  static async start(targetPort: number, targetHost = "127.0.0.1"): Promise<TcpLink> {
    const link = new TcpLink(await freePort(), targetPort, targetHost);
    await link.heal();
    return link;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Listens again on the same port. */
  async heal(): Promise<void> {
    const server = createServer((incoming) => {
      const outgoing = new Socket();
      this.sockets.add(incoming).add(outgoing);
      const drop = () => {
        incoming.destroy();
        outgoing.destroy();
        this.sockets.delete(incoming);
        this.sockets.delete(outgoing);
      };
      incoming.on("error", drop).on("close", drop);
      outgoing.on("error", drop).on("close", drop);
      outgoing.connect(this.targetPort, this.targetHost, () => {
        incoming.pipe(outgoing);
        outgoing.pipe(incoming);
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, "127.0.0.1", resolve);
    });
    this.server = server;
  }

  /** Closes the port and drops every connection through it. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    if (server !== null) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
