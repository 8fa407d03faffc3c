import { runningServer } from "../connect/running-server.js";
import type { SwitchyardHost } from "../host/switchyard-host.js";
import { McpSessionRegistry, type CredentialCapability } from "../services/credentials/mcp-session-registry.js";
import { withHost } from "./open-host.js";
import { CliError, EXIT } from "./output.js";

/** How long the token of one terminal command lives at most; it is revoked when the command ends. */
const COMMAND_TOKEN_TTL_MS = 15 * 60_000;
/** A command that follows a run (`run`, `threads new --wait`) may take longer. */
const FOLLOWING_TOKEN_TTL_MS = 24 * 3_600_000;

/** A typed failure the API answered with. */
interface ApiFailureBody {
  readonly error?: { readonly code?: string; readonly message?: string };
}

/** The exit code for an API failure: 3 for what does not exist, 2 for bad input, else 1. */
function exitCodeOf(status: number, code: string): number {
  if (status === 404 || code.endsWith("not_found")) return EXIT.notFound;
  if (status === 400 || code === "invalid_request") return EXIT.usage;
  return EXIT.failed;
}

/** The running server's HTTP API (`/api/v1`), called with a token that exists only for this command. */
export class ServerApi {
  constructor(
    readonly baseUrl: string,
    private readonly token: string,
  ) {}

  /** The headers every request carries. */
  headers(extra: Record<string, string> = {}): Record<string, string> {
    return { authorization: `Bearer ${this.token}`, ...extra };
  }

  /** Fails the way a person can act on: the server is not answering. */
  unreachable(error: unknown): CliError {
    return new CliError(
      `Cannot reach the Switchyard server at ${this.baseUrl} (${(error as Error).message}). Is it still running? \`switchyard status\` says.`,
      EXIT.failed,
    );
  }

  /** Fails with the API's typed error (`code: message`). */
  async refusal(response: Response): Promise<CliError> {
    const text = await response.text();
    let failure: ApiFailureBody["error"];
    try {
      failure = (JSON.parse(text) as ApiFailureBody).error;
    } catch {
      failure = undefined;
    }
    const code = failure?.code ?? `http_${response.status}`;
    return new CliError(`${code}: ${failure?.message ?? text}`, exitCodeOf(response.status, code));
  }

  async call<T>(method: "GET" | "POST", path: string, body?: unknown): Promise<T> {
    let response: Response;
    try {
      response = await fetch(`${this.baseUrl}/api/v1${path}`, {
        method,
        headers: this.headers(body !== undefined ? { "content-type": "application/json" } : {}),
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
    } catch (error) {
      throw this.unreachable(error);
    }
    if (!response.ok) throw await this.refusal(response);
    return (await response.json()) as T;
  }
}

/** What a command may do with the server: the verbs of its token, and a label `token list --all` shows. */
export interface CommandAccess {
  readonly verbs: readonly CredentialCapability[];
  /** The command, e.g. `switchyard run`. */
  readonly command: string;
  /** It follows a run, which may take hours: its token lives longer (and is still revoked at the end). */
  readonly follows?: boolean;
}

/**
 * Runs `fn` against the server running on the home, with a client token issued for this one
 * command (never printed, never in argv, marked ephemeral so `token list` leaves it out) and
 * revoked when it ends. The person at the terminal owns the home, so the token has every
 * project and the broadest ceiling; its verbs are the command's.
 */
export async function withServer<T>(
  options: { home?: string },
  access: CommandAccess,
  fn: (api: ServerApi, host: SwitchyardHost) => Promise<T>,
): Promise<T> {
  return withHost(options, async (host) => {
    const server = runningServer(host.paths.home);
    if (server === null)
      throw new CliError(
        `No Switchyard server runs on ${host.paths.home}. Start it with \`switchyard serve\`; threads live in the running server.`,
        EXIT.failed,
      );
    const registry = host.container.resolve(McpSessionRegistry);
    const issued = registry.issueClientToken({
      ttlMs: access.follows ? FOLLOWING_TOKEN_TTL_MS : COMMAND_TOKEN_TTL_MS,
      capabilities: access.verbs,
      label: `${access.command} (this terminal command)`,
      ephemeral: true,
    });
    try {
      return await fn(new ServerApi(server.url, issued.token), host);
    } finally {
      registry.revoke(issued.id);
    }
  });
}
