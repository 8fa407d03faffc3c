import { Writable } from "node:stream";
import { createGunzip, type Gunzip } from "node:zlib";
import { Unpack, type ReadEntry } from "tar";
import { ArchiveEntryChecker, assertExtractedTreeIsContained, type ArchiveLimits } from "./archive-safety.js";
import { RegistryError, describeError, isRegistryError } from "./errors.js";
import { toArchiveEntry } from "./tar-archive.js";

const GZIP_MAGIC = [0x1f, 0x8b];
const GUNZIP_CHUNK_BYTES = 1024 * 1024;

/**
 * Extracts a .tar.gz while it downloads, in the same pass that hashes it: bytes written to
 * {@link input} are gunzipped (in libuv's pool, beside the main thread) and unpacked into
 * `destination`, a staging folder the caller renames into place only once the hash matched and
 * {@link settled} reported success. Every entry is checked before node-tar writes it (names,
 * kinds, link targets, sizes, and paths through symbolic links seen so far); the cross-entry
 * checks and the walk of the real tree run at the end, before the rename. On the first refusal
 * the rest of the download is still taken (and dropped), so the caller can report a checksum
 * mismatch ahead of what a tampered archive contains; `input` itself never errors. A refusal
 * settles only once node-tar has finished the entries it had already started, so the caller can
 * remove the staging folder without a late write landing in it.
 */
export class TarGzStreamExtraction {
  readonly input: Writable;
  private readonly checker: ArchiveEntryChecker;
  private readonly gunzip: Gunzip;
  private readonly unpack: Unpack;
  private failure: RegistryError | null = null;
  private head = Buffer.alloc(0);
  private readonly outcome: Promise<RegistryError | null>;
  private settle!: (failure: RegistryError | null) => void;
  private waitingForDrain: (() => void) | null = null;
  private inputEnded = false;
  private unpackDone = false;

  constructor(
    private readonly destination: string,
    private readonly where: string,
    limits: ArchiveLimits,
  ) {
    this.checker = new ArchiveEntryChecker(where, limits);
    this.outcome = new Promise((resolve) => (this.settle = resolve));
    // Large output chunks: each one is a callback here and a write in node-tar; at the 16 KiB
    // default, their bookkeeping and garbage cost more than the inflating.
    this.gunzip = createGunzip({ chunkSize: GUNZIP_CHUNK_BYTES });
    this.unpack = new Unpack({
      cwd: destination,
      // node-tar's own protections stay on (no absolute paths, no `..`, no writing through
      // symlinks) and `strict` turns every warning into a failure. Owners are never preserved:
      // running as root must not hand files to arbitrary uids from the archive.
      strict: true,
      preserveOwner: false,
      preservePaths: false,
      filter: (_path: string, entry: ReadEntry | { mode?: number }) => this.admit(entry as ReadEntry),
    });
    this.gunzip.on("error", (error) => this.fail(error));
    this.unpack.on("error", (error: Error) => this.fail(error));
    this.unpack.on("end", () => this.unpackStopped(() => void this.finish()));
    // node-tar aborts by itself past its decompression ratio; its error follows.
    this.unpack.on("abort", () => this.unpackStopped(() => {}));
    this.gunzip.pipe(this.unpack);
    this.input = new Writable({
      write: (chunk: Buffer, _encoding, callback) => this.write(chunk, callback),
      final: (callback) => {
        this.inputEnded = true;
        if (this.failure === null) {
          if (this.head.length > 0) this.checkMagic(Buffer.alloc(0), true);
          if (this.failure === null) this.gunzip.end();
        }
        callback();
      },
      destroy: (error, callback) => {
        // Destroyed before its end: the download stopped (network error, abort, size cap).
        if (error !== null || !this.inputEnded) this.fail(error ?? new Error("the download stopped"), "abandoned");
        callback(null);
      },
    });
  }

  /** The extraction's end: null once every entry is on disk and every check passed, else the refusal. Never rejects. */
  settled(): Promise<RegistryError | null> {
    return this.outcome;
  }

  private write(chunk: Buffer, callback: () => void): void {
    if (this.failure !== null) return callback();
    if (this.head.length < GZIP_MAGIC.length && !this.checkMagic(chunk, false)) return callback();
    if (this.gunzip.write(chunk)) return callback();
    // Until the unpacker catches up; a failure meanwhile releases the writer too.
    this.waitingForDrain = callback;
    this.gunzip.once("drain", () => this.releaseWriter());
  }

  private releaseWriter(): void {
    const waiting = this.waitingForDrain;
    this.waitingForDrain = null;
    waiting?.();
  }

  // The first bytes must be gzip's, as the URL claims; a mislabelled file is broken_archive.
  private checkMagic(chunk: Buffer, atEnd: boolean): boolean {
    this.head = Buffer.concat([this.head, chunk.subarray(0, GZIP_MAGIC.length - this.head.length)]);
    if (this.head.length < GZIP_MAGIC.length && !atEnd) return true;
    if (this.head.length === GZIP_MAGIC.length && GZIP_MAGIC.every((byte, i) => this.head[i] === byte)) return true;
    this.fail(
      new RegistryError(
        "broken_archive",
        `The archive ${this.where} is not gzip data although its name says tar.gz. Report it to the agent's publisher.`,
        {
          details: { url: this.where, format: "tar.gz" },
        },
      ),
    );
    return false;
  }

  // Called by node-tar for each entry before it writes anything for it.
  private admit(entry: ReadEntry): boolean {
    if (this.failure !== null) return false;
    try {
      this.checker.check(toArchiveEntry(entry));
    } catch (error) {
      this.fail(error);
      return false;
    }
    // Permission bits only: a set-uid binary from an archive, installed by root, would be a
    // privilege escalation for whoever can run it.
    if (typeof entry.mode === "number") entry.mode &= 0o777;
    return true;
  }

  private unpackStopped(next: () => void): void {
    this.unpackDone = true;
    if (this.failure === null) next();
    else this.settle(this.failure);
  }

  private async finish(): Promise<void> {
    try {
      this.checker.finish();
      await assertExtractedTreeIsContained(this.destination, this.where);
    } catch (error) {
      this.fail(error);
      return;
    }
    this.settle(null);
  }

  private fail(error: unknown, cause: "refused" | "abandoned" = "refused"): void {
    if (this.failure !== null) return;
    this.failure = isRegistryError(error)
      ? error
      : new RegistryError(
          cause === "abandoned" ? "download_failed" : "broken_archive",
          cause === "abandoned"
            ? `Downloading ${this.where} stopped: ${describeError(error)}.`
            : `The archive ${this.where} could not be read (${describeError(error)}). Nothing was installed; retry, or report it to the agent's publisher.`,
          { details: { url: this.where, format: "tar.gz" }, cause: error },
        );
    // Stop decompressing, and end the unpacker instead of aborting it: an abort leaves the writes
    // it already started running, so they could land after the caller removed the staging
    // folder. Ended, node-tar finishes the entry in hand (cut short, and discarded with the rest)
    // and reports "end" once every write it started is done; filtered out, nothing else starts.
    this.gunzip.unpipe(this.unpack);
    this.gunzip.destroy();
    this.releaseWriter();
    if (this.unpackDone) this.settle(this.failure);
    else this.unpack.end();
  }
}
