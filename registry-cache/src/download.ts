import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";
import { once } from "node:events";
import type { Writable } from "node:stream";
import { RegistryError, describeError, isRegistryError } from "./errors.js";
import type { FetchLike } from "./fetch-like.js";
import { isTimeoutError, withTimeout } from "./fetch-like.js";
import { checkRemoteUrl, describeUrl } from "./url-policy.js";

export interface DownloadOptions {
  readonly url: string;
  /** A file that must not exist yet (created exclusively), or a stream that takes the bytes as they arrive. */
  readonly destination: string | Writable;
  readonly fetch: FetchLike;
  readonly maxBytes: number;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  readonly onProgress?: (receivedBytes: number, totalBytes: number | undefined) => void;
}

export interface DownloadResult {
  /** Lower-case hex SHA-256 of exactly the bytes written. */
  readonly sha256: string;
  readonly bytes: number;
}

/**
 * Streams an archive to disk, hashing every byte as it passes, so verification needs no second
 * read of a possibly large file. `identity` encoding is requested because fetch would otherwise
 * decompress transparently and the hash would no longer be the hash of the published archive.
 * A body shorter than its Content-Length (the server or a proxy dropped the connection) is
 * `download_truncated`, never a silently short file.
 */
export async function downloadArchive(options: DownloadOptions): Promise<DownloadResult> {
  const url = checkRemoteUrl(options.url, "archive");
  const where = describeUrl(url);
  let response: Response;
  try {
    response = await options.fetch(url.href, {
      signal: withTimeout(options.timeoutMs, options.signal),
      headers: { "accept-encoding": "identity" },
      redirect: "follow",
    });
  } catch (error) {
    throw failure(error, where, options);
  }
  if (response.url !== "" && response.url !== url.href) checkRemoteUrl(response.url, "archive (after redirect)");
  if (!response.ok || response.body === null) {
    await response.body?.cancel().catch(() => undefined);
    throw new RegistryError(
      "download_failed",
      `Downloading ${where} failed with HTTP ${response.status}. Retry later, or report the broken link to the agent's publisher.`,
      {
        details: { url: where, status: response.status },
      },
    );
  }
  const encoding = response.headers.get("content-encoding");
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  // A transfer-encoded body's length says nothing about the decoded bytes we count.
  const expected = Number.isFinite(declared) && (encoding === null || encoding === "identity") ? declared : undefined;
  if (expected !== undefined && expected > options.maxBytes) {
    await response.body.cancel().catch(() => undefined);
    throw tooLarge(where, options.maxBytes, expected);
  }

  const hash = createHash("sha256");
  const toFile = typeof options.destination === "string";
  const file =
    typeof options.destination === "string"
      ? createWriteStream(options.destination, { flags: "wx" })
      : options.destination;
  const fileError = once(file, "error").then(([error]) => Promise.reject(error as Error));
  fileError.catch(() => undefined);
  let received = 0;
  try {
    if (toFile) await once(file, "open");
    options.onProgress?.(0, expected);
    for await (const chunk of response.body) {
      received += chunk.byteLength;
      if (received > options.maxBytes) throw tooLarge(where, options.maxBytes, received);
      hash.update(chunk);
      // Said as soon as the bytes arrive: a streaming destination may hold the drain until the
      // next chunk completes what it is decoding, which would hide a download that paused.
      const drained = file.write(chunk);
      options.onProgress?.(received, expected);
      if (!drained) await Promise.race([once(file, "drain"), fileError]);
    }
    file.end();
    await Promise.race([once(file, "finish"), fileError]);
  } catch (error) {
    file.destroy();
    if (isRegistryError(error)) throw error;
    if (expected !== undefined && received < expected && !isAbort(error))
      throw truncated(where, received, expected, error);
    throw failure(error, where, options);
  } finally {
    if (!file.closed) await once(file, "close").catch(() => undefined);
  }
  if (expected !== undefined && received !== expected) throw truncated(where, received, expected);
  return { sha256: hash.digest("hex"), bytes: received };
}

function isAbort(error: unknown): boolean {
  return error instanceof Error && (error.name === "AbortError" || error.name === "TimeoutError");
}

function failure(error: unknown, where: string, options: DownloadOptions): RegistryError {
  if (options.signal?.aborted === true) {
    return new RegistryError("aborted", `Downloading ${where} was cancelled.`, {
      details: { url: where },
      cause: error,
    });
  }
  if (isTimeoutError(error)) {
    return new RegistryError(
      "download_failed",
      `Downloading ${where} timed out after ${options.timeoutMs} ms. Check the network and retry.`,
      {
        details: { url: where, timeoutMs: options.timeoutMs },
        cause: error,
      },
    );
  }
  return new RegistryError(
    "download_failed",
    `Downloading ${where} failed: ${describeError(error)}. Check the network and retry.`,
    {
      details: { url: where },
      cause: error,
    },
  );
}

function truncated(where: string, received: number, expected: number, cause?: unknown): RegistryError {
  return new RegistryError(
    "download_truncated",
    `The download of ${where} ended after ${received} of ${expected} bytes. Nothing was installed; retry.`,
    { details: { url: where, receivedBytes: received, expectedBytes: expected }, cause },
  );
}

function tooLarge(where: string, limit: number, size: number): RegistryError {
  return new RegistryError(
    "download_too_large",
    `The archive at ${where} is larger than the ${limit}-byte limit (at least ${size} bytes).`,
    {
      details: { url: where, limitBytes: limit, sizeBytes: size },
    },
  );
}
