import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/sdk/types.js";

/** The MCP session id's version prefix: ids of another shape are not Switchyard's and are ignored. */
const PREFIX = "sy1.";
/** What names a 2026-07-28 client's session (its declared name follows), never a 2025 session's nonce (hex). */
const MODERN_PREFIX = "client:";
/** The longest client name and version kept (they are shown, never trusted). */
const MAX_NAME = 64;
const MAX_VERSION = 32;

/**
 * What a client token's MCP session says about itself: a nonce that names the session (for a
 * 2026-07-28 client, its name: see {@link clientSessionOfEnvelope}), the client's name and
 * version, and whether it declared `roots`. Carried in the session id itself
 * (base64url JSON, not a secret: the bearer token authorizes), so the endpoint stays stateless and
 * a session outlives a Switchyard restart: the client keeps sending the id it was given.
 */
export interface ClientSessionFacts {
  readonly nonce: string;
  readonly client: { readonly name: string; readonly version: string } | null;
  readonly roots: boolean;
}

function printable(value: unknown, max: number): string | null {
  if (typeof value !== "string") return null;
  const text = value
    .replace(/[^\x20-\x7e]/g, "")
    .trim()
    .slice(0, max);
  return text === "" ? null : text;
}

/** A new session id for a client's `initialize` (its params: clientInfo, capabilities). */
export function newClientSessionId(initialize: JSONRPCMessage): string {
  const params = ("params" in initialize ? initialize.params : undefined) as
    { clientInfo?: { name?: unknown; version?: unknown }; capabilities?: { roots?: unknown } } | undefined;
  const name = printable(params?.clientInfo?.name, MAX_NAME);
  const facts = {
    k: randomBytes(12).toString("hex"),
    ...(name !== null ? { n: name, v: printable(params?.clientInfo?.version, MAX_VERSION) ?? "" } : {}),
    ...(typeof params?.capabilities?.roots === "object" && params.capabilities.roots !== null ? { r: 1 } : {}),
  };
  return `${PREFIX}${Buffer.from(JSON.stringify(facts)).toString("base64url")}`;
}

/**
 * The session of a 2026-07-28 request, which has none: its client's declared name (the
 * `io.modelcontextprotocol/clientInfo` it sends with every request) stands for it, under the
 * token that authorizes it. Two sessions of one client on one token therefore share an attached
 * thread; a token per session (`switchyard token issue`) keeps them apart. Null when the request
 * names no client: the token is then the session.
 */
export function clientSessionOfEnvelope(clientInfo: unknown): ClientSessionFacts | null {
  const info = clientInfo as { name?: unknown; version?: unknown } | null | undefined;
  const name = printable(info?.name, MAX_NAME);
  if (name === null) return null;
  return {
    nonce: `${MODERN_PREFIX}${name}`,
    client: { name, version: printable(info?.version, MAX_VERSION) ?? "" },
    roots: false,
  };
}

/**
 * The last session id read and its facts: a session sends the same id with every request, and
 * decoding it (base64, JSON) was a measurable share of a tool call's own cost.
 */
let lastRead: { readonly header: string; readonly facts: ClientSessionFacts | null } | null = null;

/** The facts of a session id this endpoint issued; null for a missing or foreign one. */
export function readClientSessionId(header: string | string[] | undefined): ClientSessionFacts | null {
  if (typeof header !== "string" || !header.startsWith(PREFIX) || header.length > 512) return null;
  if (lastRead?.header === header) return lastRead.facts;
  const facts = decodeClientSessionId(header);
  lastRead = { header, facts };
  return facts;
}

function decodeClientSessionId(header: string): ClientSessionFacts | null {
  try {
    const raw = JSON.parse(Buffer.from(header.slice(PREFIX.length), "base64url").toString("utf8")) as {
      k?: unknown;
      n?: unknown;
      v?: unknown;
      r?: unknown;
    };
    if (typeof raw.k !== "string" || !/^[0-9a-f]{24}$/.test(raw.k)) return null;
    const name = printable(raw.n, MAX_NAME);
    return {
      nonce: raw.k,
      client: name === null ? null : { name, version: printable(raw.v, MAX_VERSION) ?? "" },
      roots: raw.r === 1,
    };
  } catch {
    return null;
  }
}

/** The folders among a `roots/list` answer (its `file://` URIs), in its order. */
export function rootFolders(result: unknown): string[] {
  const roots = (result as { roots?: unknown } | null)?.roots;
  if (!Array.isArray(roots)) return [];
  const folders: string[] = [];
  for (const root of roots.slice(0, 50)) {
    const uri = (root as { uri?: unknown } | null)?.uri;
    if (typeof uri !== "string" || !uri.startsWith("file://")) continue;
    try {
      folders.push(fileURLToPath(uri).replace(/\/+$/, "") || "/");
    } catch {
      // not a local file URI
    }
  }
  return folders;
}

/** How long a client may take to answer `roots/list` before the call goes on without its roots. */
export const ROOTS_ANSWER_MS = 5_000;
/** How many sessions' roots are remembered (the least recently asked go first). */
const MAX_REMEMBERED = 1_000;

/**
 * Asks clients for their roots and remembers the answer per session until the client says they
 * changed (`notifications/roots/list_changed`). The request goes on the SSE stream of the call
 * that needs it; the client answers on a POST of its own, which a stateless server cannot tie to
 * the request, so the answer is matched here by the credential and the request's id (ours, unique).
 */
export class ClientRoots {
  private readonly waiting = new Map<string, (result: unknown) => void>();
  private readonly known = new Map<string, readonly string[]>();

  /** The roots remembered for a session, if any. */
  remembered(credentialId: string, nonce: string): readonly string[] | undefined {
    return this.known.get(sessionKey(credentialId, nonce));
  }

  /** Asks the client (through `send`, on the call's stream) and remembers its answer; null when it did not answer in time. */
  async ask(
    credentialId: string,
    nonce: string,
    send: (request: JSONRPCMessage) => Promise<void>,
    signal: AbortSignal,
  ): Promise<readonly string[] | null> {
    const id = `switchyard-roots-${randomBytes(8).toString("hex")}`;
    const key = answerKey(credentialId, id);
    let timer: NodeJS.Timeout | undefined;
    const answered = new Promise<unknown>((resolve) => {
      this.waiting.set(key, resolve);
      timer = setTimeout(() => resolve(undefined), ROOTS_ANSWER_MS);
      signal.addEventListener("abort", () => resolve(undefined), { once: true });
    });
    try {
      await send({ jsonrpc: "2.0", id, method: "roots/list" });
      const result = await answered;
      if (result === undefined) return null;
      const folders = rootFolders(result);
      this.known.delete(sessionKey(credentialId, nonce));
      this.known.set(sessionKey(credentialId, nonce), folders);
      if (this.known.size > MAX_REMEMBERED) this.known.delete(this.known.keys().next().value!);
      return folders;
    } catch {
      return null;
    } finally {
      clearTimeout(timer);
      this.waiting.delete(key);
    }
  }

  /**
   * Takes the answers among a POST's messages that answer one of our `roots/list` requests, and
   * forgets a session's roots on `notifications/roots/list_changed`. True when every message was
   * one of ours (the POST is then answered 202 and goes no further).
   */
  take(credentialId: string, nonce: string | null, messages: readonly JSONRPCMessage[]): boolean {
    let ours = 0;
    for (const message of messages) {
      if ("method" in message) {
        if (message.method === "notifications/roots/list_changed" && nonce !== null)
          this.known.delete(sessionKey(credentialId, nonce));
        continue;
      }
      const id = (message as { id?: RequestId }).id;
      const resolve = typeof id === "string" ? this.waiting.get(answerKey(credentialId, id)) : undefined;
      if (resolve === undefined) continue;
      ours += 1;
      resolve("result" in message ? message.result : { roots: [] });
    }
    return ours > 0 && ours === messages.length;
  }
}

function sessionKey(credentialId: string, nonce: string): string {
  return `${credentialId}\n${nonce}`;
}

function answerKey(credentialId: string, id: string): string {
  return `${credentialId}\n${id}`;
}
