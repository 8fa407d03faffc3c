import { createHash } from "node:crypto";
import { mkdir, readFile } from "node:fs/promises";
import { z } from "zod";
import type { CacheLayout } from "./cache-layout.js";
import { RegistryError, describeError, isRegistryError } from "./errors.js";
import type { FetchLike } from "./fetch-like.js";
import { isTimeoutError, withTimeout } from "./fetch-like.js";
import { writeFileAtomic } from "./fs-atomic.js";
import type { RegistryLogger } from "./logger.js";
import { decodeRegistryIndex, type DroppedAgent, type RegistryIndex } from "./registry-schema.js";
import { checkRemoteUrl, describeUrl } from "./url-policy.js";

/** The index as loaded, with where it came from. */
export interface LoadedRegistryIndex {
  readonly index: RegistryIndex;
  /** Agents the decoder refused (each was also logged as a warning). */
  readonly dropped: readonly DroppedAgent[];
  /** The registry URL without query string. */
  readonly url: string;
  /** `network` when just fetched; `cache` when the network failed and the cached copy was used. */
  readonly source: "network" | "cache";
  /** True when the copy in use is not a fresh fetch. */
  readonly stale: boolean;
  /** When this copy was fetched from the network (ISO 8601). */
  readonly fetchedAt: string;
  /** Why the refresh failed, when `stale`. */
  readonly refreshError?: string;
}

export interface IndexFetcherOptions {
  readonly url: string;
  readonly layout: CacheLayout;
  readonly fetch: FetchLike;
  readonly logger: RegistryLogger;
  readonly maxBytes: number;
  readonly timeoutMs: number;
}

const cacheMetaSchema = z.object({ url: z.string(), fetchedAt: z.string(), sha256: z.string() });

/** Thrown inside the fetcher for failures that justify falling back to the cached copy. */
class NetworkUnavailable extends Error {}

/**
 * Fetches the registry index, enforcing the size cap while streaming, and keeps the last good
 * copy on disk. Only network failures (unreachable, timeout, HTTP error status) fall back to
 * that copy; a body that is too large or malformed is refused with a typed error, because the
 * publisher or the configured URL is wrong and a silent fallback would hide it.
 */
export class RegistryIndexFetcher {
  private readonly url: URL;

  constructor(private readonly options: IndexFetcherOptions) {
    this.url = checkRemoteUrl(options.url, "registry");
  }

  async load(): Promise<LoadedRegistryIndex> {
    let body: Buffer;
    try {
      body = await this.fetchBody();
    } catch (error) {
      if (!(error instanceof NetworkUnavailable)) throw error;
      return this.fallBackToCache(error.message);
    }
    const decoded = this.decode(body.toString("utf8"));
    const fetchedAt = new Date().toISOString();
    await this.storeCopy(body, fetchedAt);
    this.reportDropped(decoded.dropped);
    return {
      index: decoded.index,
      dropped: decoded.dropped,
      url: describeUrl(this.url),
      source: "network",
      stale: false,
      fetchedAt,
    };
  }

  private async fetchBody(): Promise<Buffer> {
    const where = describeUrl(this.url);
    let response: Response;
    try {
      response = await this.options.fetch(this.url.href, {
        signal: withTimeout(this.options.timeoutMs),
        headers: { accept: "application/json" },
        redirect: "follow",
      });
    } catch (error) {
      throw new NetworkUnavailable(
        isTimeoutError(error) ? `timed out after ${this.options.timeoutMs} ms` : describeError(error),
      );
    }
    if (response.url !== "" && response.url !== this.url.href)
      checkRemoteUrl(response.url, "registry (after redirect)");
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      throw new NetworkUnavailable(`HTTP ${response.status} from ${where}`);
    }
    const declared = Number(response.headers.get("content-length") ?? Number.NaN);
    if (Number.isFinite(declared) && declared > this.options.maxBytes) {
      await response.body?.cancel().catch(() => undefined);
      throw this.tooLarge(declared);
    }
    const chunks: Buffer[] = [];
    let received = 0;
    try {
      if (response.body !== null) {
        for await (const chunk of response.body) {
          received += chunk.byteLength;
          // Leaving the loop by throwing cancels the stream, so an endless body stops here.
          if (received > this.options.maxBytes) throw this.tooLarge(received);
          chunks.push(Buffer.from(chunk));
        }
      }
    } catch (error) {
      if (isRegistryError(error)) throw error;
      throw new NetworkUnavailable(`the connection failed while reading the index: ${describeError(error)}`);
    }
    return Buffer.concat(chunks);
  }

  private tooLarge(bytes: number): RegistryError {
    return new RegistryError(
      "index_too_large",
      `The registry index at ${describeUrl(this.url)} is larger than ${this.options.maxBytes} bytes (got at least ${bytes}). ` +
        "Check --registry-url points at a registry.json file.",
      { details: { url: describeUrl(this.url), limitBytes: this.options.maxBytes, receivedBytes: bytes } },
    );
  }

  private decode(text: string): { index: RegistryIndex; dropped: readonly DroppedAgent[] } {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw new RegistryError(
        "invalid_index",
        `The registry index at ${describeUrl(this.url)} is not valid JSON (${describeError(error)}). Check --registry-url.`,
        {
          details: { url: describeUrl(this.url) },
        },
      );
    }
    const decoded = decodeRegistryIndex(json);
    if (!decoded.ok) {
      throw new RegistryError(
        "invalid_index",
        `The registry index at ${describeUrl(this.url)} has an invalid envelope at ${decoded.problem}. Check --registry-url.`,
        {
          details: { url: describeUrl(this.url), problem: decoded.problem },
        },
      );
    }
    return decoded;
  }

  private reportDropped(dropped: readonly DroppedAgent[]): void {
    for (const agent of dropped) {
      this.options.logger.warn("registry agent dropped: invalid entry", {
        agentId: agent.agentId,
        field: agent.field,
        problem: agent.problem,
      });
    }
  }

  // The body is written before the metadata that vouches for it (by hash), so a crash between
  // the two renames leaves a copy that is ignored rather than one attributed to the wrong URL.
  private async storeCopy(body: Buffer, fetchedAt: string): Promise<void> {
    const { layout } = this.options;
    await mkdir(layout.root, { recursive: true });
    await writeFileAtomic(layout.indexFile, body);
    const meta = { url: this.url.href, fetchedAt, sha256: sha256(body) };
    await writeFileAtomic(layout.indexMetaFile, JSON.stringify(meta, null, 2) + "\n");
  }

  private async fallBackToCache(refreshError: string): Promise<LoadedRegistryIndex> {
    const where = describeUrl(this.url);
    const cached = await this.readCachedCopy();
    if (cached === null) {
      throw new RegistryError(
        "index_unavailable",
        `Could not fetch the registry index from ${where} (${refreshError}) and there is no cached copy. Check the network or --registry-url, then retry.`,
        { details: { url: where, refreshError } },
      );
    }
    this.options.logger.warn("registry index refresh failed; using the cached copy", {
      url: where,
      fetchedAt: cached.fetchedAt,
      error: refreshError,
    });
    this.reportDropped(cached.dropped);
    return { ...cached, refreshError };
  }

  /** The last good copy for this same URL, or null when absent, mismatched or corrupt. */
  async readCachedCopy(): Promise<LoadedRegistryIndex | null> {
    const { layout } = this.options;
    try {
      const meta = cacheMetaSchema.parse(JSON.parse(await readFile(layout.indexMetaFile, "utf8")));
      if (meta.url !== this.url.href) return null;
      const body = await readFile(layout.indexFile);
      if (sha256(body) !== meta.sha256) return null;
      const decoded = this.decode(body.toString("utf8"));
      return {
        index: decoded.index,
        dropped: decoded.dropped,
        url: describeUrl(this.url),
        source: "cache",
        stale: true,
        fetchedAt: meta.fetchedAt,
      };
    } catch {
      return null;
    }
  }
}

function sha256(data: Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}
