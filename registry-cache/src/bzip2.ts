// The module ships no types; the reference keeps them visible to every program that compiles this file.
/// <reference path="./types/unbzip2-stream.d.ts" />
import { createReadStream, createWriteStream } from "node:fs";
import { Transform, type TransformCallback } from "node:stream";
import { pipeline } from "node:stream/promises";
import unbzip2Stream from "unbzip2-stream";
import { RegistryError } from "./errors.js";

/**
 * node-tar reads gzip but not bzip2, so a .tar.bz2 is first decompressed to a plain .tar next
 * to it (inside the install's temp directory). The output is capped: a bzip2 bomb must not
 * fill the disk before the entry checks even start.
 */
export async function decompressBzip2(
  source: string,
  destination: string,
  maxBytes: number,
  where: string,
): Promise<void> {
  let written = 0;
  const cap = new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      written += chunk.length;
      if (written > maxBytes) {
        callback(
          new RegistryError(
            "archive_too_large",
            `The archive ${where} expands to more than ${maxBytes} bytes. Nothing was installed.`,
            {
              details: { url: where, maxExtractedBytes: maxBytes },
            },
          ),
        );
        return;
      }
      callback(null, chunk);
    },
  });
  await pipeline(createReadStream(source), unbzip2Stream(), cap, createWriteStream(destination, { flags: "wx" }));
}
