import type { Command } from "commander";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { isJSONRPCRequest, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { CliError, EXIT } from "../output.js";

/** Why the bridge could not forward a message to the Switchyard endpoint. */
interface UpstreamProblem {
  readonly reason: "unauthorized" | "unreachable" | "upstream_error";
  /** JSON-RPC error code (the implementation-defined server range). */
  readonly code: number;
  readonly message: string;
  /** What the bridge exits with once its client is gone. */
  readonly exitCode: number;
}

const NETWORK_ERRORS = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
]);

function networkErrorCode(error: unknown): string | null {
  for (
    let current: unknown = error, depth = 0;
    current instanceof Error && depth < 4;
    current = current.cause, depth++
  ) {
    const code = (current as NodeJS.ErrnoException).code;
    if (typeof code === "string" && NETWORK_ERRORS.has(code)) return code;
  }
  return null;
}

function describeUpstreamFailure(error: unknown, url: string): UpstreamProblem {
  if (error instanceof StreamableHTTPError && error.code === 401) {
    return {
      reason: "unauthorized",
      code: -32001,
      message: `Switchyard at ${url} refused SWITCHYARD_MCP_TOKEN (HTTP 401): the token is unknown, expired or revoked. Issue one with \`switchyard token issue\` and set SWITCHYARD_MCP_TOKEN to it.`,
      exitCode: EXIT.usage,
    };
  }
  const network = networkErrorCode(error);
  if (network !== null) {
    return {
      reason: "unreachable",
      code: -32002,
      message: `Cannot reach Switchyard at ${url} (${network}). Start it with \`switchyard serve\`, or set SWITCHYARD_MCP_URL to the MCP endpoint it prints.`,
      exitCode: EXIT.failed,
    };
  }
  return {
    reason: "upstream_error",
    code: -32003,
    message: `Switchyard at ${url} did not take the message: ${(error as Error).message}`,
    exitCode: EXIT.failed,
  };
}

/**
 * `switchyard mcp-bridge`: a stdio MCP server that forwards every message to the Switchyard
 * HTTP endpoint, for harnesses without an HTTP MCP client. Endpoint and token come from the
 * environment (SWITCHYARD_MCP_URL, SWITCHYARD_MCP_TOKEN), never argv.
 *
 * When a message cannot be forwarded (a refused token, a server that is not running), every
 * request is answered with a JSON-RPC error naming the problem, and the bridge exits non-zero
 * once its client closes stdin. It does not exit on the first failure: a client that sees the
 * pipe close before it reads the answer reports "connection closed" instead of the reason, and
 * a server that comes up later is reached by the next request.
 */
export function registerMcpBridge(program: Command): void {
  program
    .command("mcp-bridge")
    .description(
      "Bridge a stdio MCP client to the Switchyard endpoint (reads SWITCHYARD_MCP_URL and SWITCHYARD_MCP_TOKEN)",
    )
    .action(async () => {
      const url = process.env.SWITCHYARD_MCP_URL;
      const token = process.env.SWITCHYARD_MCP_TOKEN;
      if (!url || !token)
        throw new CliError("SWITCHYARD_MCP_URL and SWITCHYARD_MCP_TOKEN must be set in the environment.", EXIT.usage);
      let endpoint: URL;
      try {
        endpoint = new URL(url);
      } catch {
        throw new CliError(
          `SWITCHYARD_MCP_URL (${url}) is not a URL; set it to the MCP endpoint \`switchyard serve\` prints.`,
          EXIT.usage,
        );
      }
      const upstream = new StreamableHTTPClientTransport(endpoint, {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      });
      const downstream = new StdioServerTransport();
      const inFlight = new Set<Promise<void>>();
      let failure: UpstreamProblem | null = null;
      let lastLogged = "";
      const log = (text: string) => {
        if (text === lastLogged) return;
        lastLogged = text;
        process.stderr.write(`switchyard mcp-bridge: ${text}\n`);
      };
      const forward = async (message: JSONRPCMessage) => {
        try {
          await upstream.send(message);
        } catch (error) {
          const problem = describeUpstreamFailure(error, url);
          failure = problem;
          log(problem.message);
          if (isJSONRPCRequest(message)) {
            await downstream.send({
              jsonrpc: "2.0",
              id: message.id,
              error: { code: problem.code, message: problem.message, data: { reason: problem.reason, url } },
            });
          }
        }
      };
      downstream.onmessage = (message) => {
        const sent = forward(message).finally(() => inFlight.delete(sent));
        inFlight.add(sent);
      };
      upstream.onmessage = (message) => {
        void downstream.send(message);
      };
      upstream.onerror = (error) => log(describeUpstreamFailure(error, url).message);
      let closing = false;
      const close = async () => {
        if (closing) return;
        closing = true;
        // Answer what is still on its way before going.
        await Promise.allSettled([...inFlight]);
        await upstream.close().catch(() => undefined);
        const code = failure === null ? EXIT.ok : (failure as UpstreamProblem).exitCode;
        process.stdout.write("", () => process.exit(code));
      };
      downstream.onclose = () => void close();
      process.stdin.on("end", () => void close());
      await upstream.start();
      await downstream.start();
    });
}
