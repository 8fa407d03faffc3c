import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

/** A real MCP client over Streamable HTTP with a bearer token. */
export async function connectMcp(url: string, token: string | null): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(
    new URL(url),
    token === null ? {} : { requestInit: { headers: { Authorization: `Bearer ${token}` } } },
  );
  const client = new Client({ name: "switchyard-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

export type ToolOutcome<T = Record<string, unknown>> =
  { ok: true; value: T } | { ok: false; code: string; message: string; details: Record<string, unknown> };

/** Calls a tool and returns its structured result or its typed failure. */
export async function callTool<T = Record<string, unknown>>(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  options: { onprogress?: (p: unknown) => void; signal?: AbortSignal; timeout?: number } = {},
): Promise<ToolOutcome<T>> {
  const result = await client.callTool({ name, arguments: args }, undefined, {
    timeout: options.timeout ?? 120_000,
    resetTimeoutOnProgress: true,
    ...(options.onprogress ? { onprogress: options.onprogress as never } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  if (result.isError) {
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

/** Calls a tool that must succeed. */
export async function mustCall<T = Record<string, unknown>>(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<T> {
  const outcome = await callTool<T>(client, name, args);
  if (!outcome.ok) throw new Error(`${name} failed: ${outcome.code}: ${outcome.message}`);
  return outcome.value;
}
