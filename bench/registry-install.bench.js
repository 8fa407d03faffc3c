// Installing an ACP Registry binary agent: our download (from a registry server in a child
// process, as a real registry is another machine), SHA-256, entry checks and extraction
// into a staging folder in one streaming pass, then the rename, against the shell baseline `sha256sum` + `tar -xzf` on the same ~50 MB tar.gz
// (the baseline does not even download). Content is random bytes, so gzip cannot shrink it and
// the work is real I/O and hashing, as with agent binaries.
import { execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { createInterface } from "node:readline";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { RegistryCatalog } from "../registry-cache/dist/index.js";

const exec = promisify(execFile);
const MIB = 1024 * 1024;
const FILES = 10;
const FILE_BYTES = 5 * MIB;
const RUNS = 3;
const PLATFORM = "linux-x86_64";

/** The registry: its index and the archive, from a child process. argv: archive, bytes, sha256, platform. */
const REGISTRY_SERVER = `
const { createReadStream } = require("node:fs");
const { createServer } = require("node:http");
const [archive, bytes, sha256, platform] = process.argv.slice(1);
const server = createServer((request, response) => {
  if (request.url === "/registry.json") {
    const archiveUrl = "http://127.0.0.1:" + server.address().port + "/agent-linux-x64.tar.gz";
    const index = { version: "1.0.0", agents: [{ id: "bench-agent", name: "Bench", version: "1.0.0", description: "bench", distribution: { binary: { [platform]: { archive: archiveUrl, cmd: "./agent", sha256 } } } }] };
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(index));
    return;
  }
  response.writeHead(200, { "content-type": "application/octet-stream", "content-length": bytes });
  createReadStream(archive).pipe(response);
});
server.listen(0, "127.0.0.1", () => console.log(server.address().port));
`;

export default async function run() {
  const work = await mkdtemp(join(tmpdir(), "switchyard-bench-registry-"));
  let server;
  try {
    const source = join(work, "source");
    await mkdir(source, { recursive: true });
    for (let i = 0; i < FILES; i += 1) await writeFile(join(source, `blob-${i}.bin`), randomBytes(FILE_BYTES));
    await writeFile(join(source, "agent"), "#!/bin/sh\necho ok\n");
    await chmod(join(source, "agent"), 0o755);
    const archive = join(work, "agent-linux-x64.tar.gz");
    await exec("tar", ["-czf", archive, "-C", source, "."]);
    const archiveBytes = (await stat(archive)).size;
    const sha256 = createHash("sha256")
      .update(await readFile(archive))
      .digest("hex");

    // The registry is another machine in real life: it serves from its own process here, so
    // sending 50 MB does not run on the event loop of the install being measured.
    server = spawn(process.execPath, ["-e", REGISTRY_SERVER, archive, String(archiveBytes), sha256, PLATFORM], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const port = await new Promise((resolve, reject) => {
      server.once("exit", (code) => reject(new Error(`registry server exited ${code}`)));
      createInterface({ input: server.stdout }).once("line", (line) => resolve(Number(line)));
    });
    const registryUrl = `http://127.0.0.1:${port}/registry.json`;

    const ours = [];
    const baseline = [];
    for (let runIndex = 0; runIndex < RUNS; runIndex += 1) {
      const cacheDir = join(work, `cache-${runIndex}`);
      const catalog = new RegistryCatalog({ cacheDir, registryUrl, platform: PLATFORM });
      await catalog.loadIndex(); // only the install is timed
      let started = process.hrtime.bigint();
      const prepared = await catalog.prepare("bench-agent");
      ours.push(Number(process.hrtime.bigint() - started) / 1e9);
      if (prepared.alreadyInstalled) throw new Error("bench install unexpectedly reused a cache");
      await rm(cacheDir, { recursive: true, force: true });

      const out = join(work, `baseline-${runIndex}`);
      await mkdir(out);
      started = process.hrtime.bigint();
      await exec("sh", ["-c", 'sha256sum "$1" >/dev/null && tar -xzf "$1" -C "$2"', "sh", archive, out]);
      baseline.push(Number(process.hrtime.bigint() - started) / 1e9);
      await rm(out, { recursive: true, force: true });
    }

    const oursMedian = median(ours);
    const baselineMedian = median(baseline);
    return {
      name: "registry-install",
      rows: [
        {
          metric:
            "registry binary install vs sha256sum + tar -xzf (download, sha256, entry checks and extraction in one streaming pass)",
          value: oursMedian,
          unit: "s",
          baseline: baselineMedian,
          ratio: oursMedian / baselineMedian,
          note: `median of ${RUNS}; goal <= 1.3x; baseline: sha256sum + tar -xzf of the same ${(archiveBytes / MIB).toFixed(1)} MiB file, no download`,
        },
        {
          metric: "install throughput",
          value: archiveBytes / MIB / oursMedian,
          unit: "MiB/s",
          baseline: archiveBytes / MIB / baselineMedian,
          ratio: baselineMedian / oursMedian,
          note: "archive bytes per second of wall time (ratio < 1 means slower than the baseline)",
        },
      ],
    };
  } finally {
    if (server !== undefined && server.exitCode === null) {
      const exited = new Promise((resolve) => server.once("exit", resolve));
      server.kill();
      await exited;
    }
    await rm(work, { recursive: true, force: true });
  }
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}
