import { execFile } from "node:child_process";
import { crc32, gzipSync } from "node:zlib";
import { promisify } from "node:util";

export const run = promisify(execFile);

/** The tiny agent every good archive carries: a shell script that prints "ok" and its args. */
export const AGENT_SCRIPT = '#!/bin/sh\necho "ok $*"\n';

export type RawEntry =
  | { name: string; type: "file"; content: string | Buffer; mode?: number }
  | { name: string; type: "dir"; mode?: number }
  | { name: string; type: "symlink" | "hardlink"; target: string }
  | { name: string; type: "chardev" | "fifo" };

const TYPE_FLAGS: Record<RawEntry["type"], string> = {
  file: "0",
  hardlink: "1",
  symlink: "2",
  chardev: "3",
  dir: "5",
  fifo: "6",
};

/**
 * A ustar archive built byte by byte, so tests can contain exactly the hostile entries real
 * tools refuse to produce (absolute names, `..`, escaping links, device files).
 */
export function buildTar(entries: readonly RawEntry[]): Buffer {
  const blocks: Buffer[] = [];
  for (const entry of entries) {
    const content =
      entry.type === "file"
        ? typeof entry.content === "string"
          ? Buffer.from(entry.content)
          : entry.content
        : Buffer.alloc(0);
    const header = Buffer.alloc(512);
    const mode =
      entry.type === "file" || entry.type === "dir" ? (entry.mode ?? (entry.type === "dir" ? 0o755 : 0o644)) : 0o777;
    header.write(entry.name, 0, 100, "utf8");
    header.write(octal(mode, 7), 100);
    header.write(octal(0, 7), 108);
    header.write(octal(0, 7), 116);
    header.write(octal(content.length, 11), 124);
    header.write(octal(1_700_000_000, 11), 136);
    header.write("        ", 148);
    header.write(TYPE_FLAGS[entry.type], 156);
    if (entry.type === "symlink" || entry.type === "hardlink") header.write(entry.target, 157, 100, "utf8");
    header.write("ustar\0", 257);
    header.write("00", 263);
    let sum = 0;
    for (const byte of header) sum += byte;
    header.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148);
    blocks.push(header, content, Buffer.alloc((512 - (content.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}

export function buildTarGz(entries: readonly RawEntry[]): Buffer {
  return gzipSync(buildTar(entries));
}

/** A stored (uncompressed) zip with Unix modes, built byte by byte for the same reason. */
export function buildZip(entries: readonly RawEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.type === "dir" && !entry.name.endsWith("/") ? `${entry.name}/` : entry.name);
    const data =
      entry.type === "file"
        ? typeof entry.content === "string"
          ? Buffer.from(entry.content)
          : entry.content
        : entry.type === "symlink"
          ? Buffer.from(entry.target)
          : Buffer.alloc(0);
    const unixMode =
      entry.type === "file"
        ? 0o100000 | (entry.mode ?? 0o644)
        : entry.type === "dir"
          ? 0o040755
          : entry.type === "symlink"
            ? 0o120777
            : entry.type === "chardev"
              ? 0o020644
              : 0o010644;
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6);
    local.writeUInt16LE(0, 8);
    local.writeUInt16LE(0, 10);
    local.writeUInt16LE(0x21, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(0, 10);
    central.writeUInt16LE(0, 12);
    central.writeUInt16LE(0x21, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE((unixMode << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, data);
    centrals.push(central, name);
    offset += local.length + name.length + data.length;
  }
  const centralDirectory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(centralDirectory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, centralDirectory, end]);
}

function octal(value: number, digits: number): string {
  return `${value.toString(8).padStart(digits, "0")}\0`;
}
