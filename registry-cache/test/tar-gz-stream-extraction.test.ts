import { lstat, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { TarGzStreamExtraction } from "../src/tar-gz-stream-extraction.js";
import { AGENT_SCRIPT, buildTarGz, type RawEntry } from "./support/archives.js";

const limits = { maxExtractedBytes: 64 * 1024 * 1024, maxEntries: 1_000 };
const agentFile: RawEntry = { name: "agent", type: "file", content: AGENT_SCRIPT, mode: 0o755 };

describe("a streamed .tar.gz extraction", () => {
  const folders: string[] = [];
  afterEach(async () => {
    for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true });
  });

  async function extract(archive: Buffer): Promise<{ destination: string; refusal: Error | null }> {
    const destination = await mkdtemp(join(tmpdir(), "switchyard-stream-extraction-"));
    folders.push(destination);
    const extraction = new TarGzStreamExtraction(destination, "https://example.test/agent.tar.gz", limits);
    extraction.input.end(archive);
    return { destination, refusal: await extraction.settled() };
  }

  // The installer removes the staging folder as soon as a refusal settles: an entry node-tar had
  // already started must be on disk by then, or its write lands in a folder being removed.
  it("settles a refusal only once the entries admitted before it are written", async () => {
    const { destination, refusal } = await extract(
      buildTarGz([
        agentFile,
        { name: "dir", type: "symlink", target: "." },
        { name: "dir/other", type: "file", content: "x" },
      ]),
    );

    expect(refusal).toMatchObject({ name: "RegistryError", reason: "unsafe_archive_entry" });
    expect((await readdir(destination)).sort()).toEqual(["agent", "dir"]);
    expect((await lstat(join(destination, "dir"))).isSymbolicLink()).toBe(true);
  });

  it("settles a refusal in the middle of a large entry, cutting it short", async () => {
    const big: RawEntry = { name: "big.bin", type: "file", content: Buffer.alloc(4 * 1024 * 1024, 1) };
    const archive = buildTarGz([agentFile, big]);
    const { destination, refusal } = await extract(archive.subarray(0, Math.floor(archive.length / 2)));

    expect(refusal).toMatchObject({ name: "RegistryError", reason: "broken_archive" });
    const names = await readdir(destination);
    expect(names).toContain("agent");
  });

  it("settles success once every entry is written", async () => {
    const { destination, refusal } = await extract(
      buildTarGz([agentFile, { name: "lib/a.txt", type: "file", content: "a" }]),
    );

    expect(refusal).toBeNull();
    expect((await readdir(destination)).sort()).toEqual(["agent", "lib"]);
  });
});
