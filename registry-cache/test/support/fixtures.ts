import { createHash } from "node:crypto";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PlatformKey, RegistryLogger } from "../../src/index.js";
import { AGENT_SCRIPT, run } from "./archives.js";

/** Tests pin the platform: the "binary" is a shell script, so any key works on Linux/macOS. */
export const PLATFORM: PlatformKey = "linux-x86_64";

export function sha256(data: Buffer | string): string {
  return createHash("sha256").update(data).digest("hex");
}

/** A temp directory removed by the returned cleanup. */
export async function makeTempDir(label: string): Promise<{ path: string; cleanup: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), `switchyard-registry-${label}-`));
  return { path, cleanup: () => rm(path, { recursive: true, force: true }) };
}

export function agentEntry(
  id: string,
  distribution: unknown,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { id, name: `Agent ${id}`, version: "1.0.0", description: `Test agent ${id}`, distribution, ...extra };
}

export function binaryDistribution(
  archive: string,
  options: { sha256?: string; cmd?: string; args?: string[]; env?: Record<string, string> } = {},
): unknown {
  return {
    binary: {
      [PLATFORM]: {
        archive,
        cmd: options.cmd ?? "./agent",
        ...(options.sha256 === undefined ? {} : { sha256: options.sha256 }),
        ...(options.args === undefined ? {} : { args: options.args }),
        ...(options.env === undefined ? {} : { env: options.env }),
      },
    },
  };
}

export function registryIndex(agents: unknown[]): Record<string, unknown> {
  return { version: "1.0.0", agents, extensions: [] };
}

/** A logger that remembers warnings, to assert on them. */
export function recordingLogger(): RegistryLogger & {
  warnings: { message: string; fields: Record<string, unknown> | undefined }[];
} {
  const warnings: { message: string; fields: Record<string, unknown> | undefined }[] = [];
  return { warnings, warn: (message, fields) => warnings.push({ message, fields }) };
}

/** Good archives made with the real `tar`, `zip` and `bzip2` tools. */
export async function buildGoodArchives(
  workDir: string,
): Promise<{ tarGz: Buffer; tarBz2: Buffer; zip: Buffer; raw: Buffer }> {
  const source = join(workDir, "agent-src");
  await mkdir(join(source, "lib"), { recursive: true });
  await writeFile(join(source, "agent"), AGENT_SCRIPT);
  await chmod(join(source, "agent"), 0o755);
  await writeFile(join(source, "lib", "data.txt"), "support file\n");
  await run("tar", ["-czf", join(workDir, "agent.tar.gz"), "-C", source, "."]);
  await run("tar", ["-cjf", join(workDir, "agent.tar.bz2"), "-C", source, "."]);
  await run("zip", ["-qr", join(workDir, "agent.zip"), "."], { cwd: source });
  return {
    tarGz: await readFile(join(workDir, "agent.tar.gz")),
    tarBz2: await readFile(join(workDir, "agent.tar.bz2")),
    zip: await readFile(join(workDir, "agent.zip")),
    raw: Buffer.from(AGENT_SCRIPT),
  };
}
