import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from "@modelcontextprotocol/client";
import type { ToolOutcome } from "./mcp-client.js";

/** The MCP protocol revisions the endpoint serves, each spoken by the SDK line its clients use. */
export type Revision = "2025-06-18" | "2026-07-28";

/** What a test does with an MCP client, whichever SDK line and revision it speaks. */
export interface RevisionClient {
  readonly revision: Revision;
  /** The revision the connection runs on, as the client itself reports it. */
  negotiated(): string | undefined;
  /** Calls a tool; its structured result or its typed failure. */
  call<T = Record<string, unknown>>(
    name: string,
    args: Record<string, unknown>,
    options?: { onprogress?: (progress: unknown) => void; signal?: AbortSignal },
  ): Promise<ToolOutcome<T>>;
  listToolNames(): Promise<string[]>;
  close(): Promise<void>;
}

interface ClientIdentity {
  readonly name: string;
  readonly version: string;
  /** Folders the client answers `roots/list` with (it declares roots only when given). */
  readonly roots?: readonly string[];
}

const DEFAULT_IDENTITY: ClientIdentity = { name: "switchyard-test", version: "1.0.0" };

function outcomeOf<T>(answer: object): ToolOutcome<T> {
  const result = answer as { isError?: unknown; content?: unknown; structuredContent?: unknown };
  if (result.isError === true) {
    const text = (result.content as { text: string }[])[0]?.text ?? "";
    try {
      const parsed = JSON.parse(text) as { error: { code: string; message: string; details: Record<string, unknown> } };
      return { ok: false, code: parsed.error.code, message: parsed.error.message, details: parsed.error.details ?? {} };
    } catch {
      return { ok: false, code: "untyped", message: text, details: {} };
    }
  }
  return { ok: true, value: result.structuredContent as T };
}

/** The SDK's v1 client (`@modelcontextprotocol/sdk` 1.32.2) on 2025-06-18, as harnesses of that line speak it. */
async function connectV1(url: string, token: string, identity: ClientIdentity): Promise<RevisionClient> {
  // The v1 client offers its newest revision (2025-11-25) at initialize; asking for 2025-06-18
  // instead is what a client of that revision sends, and the server then agrees to it.
  const fetchAs2025_06_18: typeof fetch = async (input, init) => {
    const body =
      typeof init?.body === "string"
        ? (JSON.parse(init.body) as { method?: string; params?: { protocolVersion?: string } })
        : null;
    if (body?.method === "initialize" && body.params !== undefined)
      return fetch(input, {
        ...init,
        body: JSON.stringify({ ...body, params: { ...body.params, protocolVersion: "2025-06-18" } }),
      });
    return fetch(input, init);
  };
  const transport = new TransportV1(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
    fetch: fetchAs2025_06_18,
  });
  const client = new ClientV1(
    { name: identity.name, version: identity.version },
    { capabilities: identity.roots !== undefined ? { roots: { listChanged: true } } : {} },
  );
  if (identity.roots !== undefined) {
    const { ListRootsRequestSchema } = await import("@modelcontextprotocol/sdk/types.js");
    client.setRequestHandler(ListRootsRequestSchema, () => ({
      roots: identity.roots!.map((folder) => ({ uri: `file://${folder}`, name: folder })),
    }));
  }
  await client.connect(transport);
  return {
    revision: "2025-06-18",
    negotiated: () => transport.protocolVersion,
    call: async (name, args, options = {}) =>
      outcomeOf(
        await client.callTool({ name, arguments: args }, undefined, {
          timeout: 120_000,
          resetTimeoutOnProgress: true,
          ...(options.onprogress ? { onprogress: options.onprogress as never } : {}),
          ...(options.signal ? { signal: options.signal } : {}),
        }),
      ),
    listToolNames: async () => (await client.listTools()).tools.map((tool) => tool.name),
    close: () => client.close(),
  };
}

/** The SDK's v2 client (`@modelcontextprotocol/client` 2.4.0) pinned to 2026-07-28: no initialize, `server/discover` first. */
async function connectV2(url: string, token: string, identity: ClientIdentity): Promise<RevisionClient> {
  const client = new ClientV2(
    { name: identity.name, version: identity.version },
    {
      versionNegotiation: { mode: { pin: "2026-07-28" } },
      capabilities: identity.roots !== undefined ? { roots: {} } : {},
    },
  );
  if (identity.roots !== undefined)
    client.setRequestHandler("roots/list", () => ({
      roots: identity.roots!.map((folder) => ({ uri: `file://${folder}`, name: folder })),
    }));
  await client.connect(
    new TransportV2(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
  );
  return {
    revision: "2026-07-28",
    negotiated: () => client.getNegotiatedProtocolVersion(),
    call: async (name, args, options = {}) =>
      outcomeOf(
        await client.callTool(
          { name, arguments: args },
          {
            timeout: 120_000,
            resetTimeoutOnProgress: true,
            ...(options.onprogress ? { onprogress: options.onprogress as never } : {}),
            ...(options.signal ? { signal: options.signal } : {}),
          },
        ),
      ),
    listToolNames: async () => (await client.listTools()).tools.map((tool) => tool.name),
    close: () => client.close(),
  };
}

/** A real MCP client over Streamable HTTP with a bearer token, speaking `revision`. */
export function connectRevision(
  revision: Revision,
  url: string,
  token: string,
  identity: Partial<ClientIdentity> = {},
): Promise<RevisionClient> {
  const who = { ...DEFAULT_IDENTITY, ...identity };
  return revision === "2025-06-18" ? connectV1(url, token, who) : connectV2(url, token, who);
}
