import { createHash, randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

const COMPILED = fileURLToPath(new URL("./pi-extension/switchyard-extension.js", import.meta.url));
const SOURCE = fileURLToPath(new URL("./pi-extension/switchyard-extension.ts", import.meta.url));

/**
 * Where the extension ships: the compiled module next to this one in `dist`; when this module
 * runs from `src` (the test runner), the TypeScript source, which Pi's jiti loader takes as is.
 */
export const EXTENSION_SOURCE_PATH = existsSync(COMPILED) ? COMPILED : SOURCE;

/** The extension as Pi gets it (without a source-map link) and the file extension it needs. */
export async function extensionSource(): Promise<{ readonly text: string; readonly extension: ".js" | ".ts" }> {
  const raw = await readFile(EXTENSION_SOURCE_PATH, "utf8");
  return {
    text: raw.replace(/\n\/\/# sourceMappingURL=.*\s*$/, "\n"),
    extension: EXTENSION_SOURCE_PATH.endsWith(".ts") ? ".ts" : ".js",
  };
}

const written = new Map<string, Promise<string>>();

/**
 * Writes the Switchyard extension into `<cacheDir>/pi-extension/` under a content-addressed name
 * (so sessions of different plugin versions never share a file) and returns its path. The file
 * holds code only: the endpoint, token and instructions reach it through the environment.
 */
export async function writeSwitchyardExtension(cacheDir: string): Promise<string> {
  const existing = written.get(cacheDir);
  if (existing) {
    const target = await existing.catch(() => null);
    // Someone may have cleared the cache while the server runs: write it again.
    if (target !== null && existsSync(target)) return target;
    if (written.get(cacheDir) === existing) written.delete(cacheDir);
  }
  return writeOnce(cacheDir);
}

function writeOnce(cacheDir: string): Promise<string> {
  const current = written.get(cacheDir);
  if (current) return current;
  const pending = (async () => {
    const { text: source, extension } = await extensionSource();
    const hash = createHash("sha256").update(source).digest("hex").slice(0, 12);
    const dir = path.join(cacheDir, "pi-extension");
    const target = path.join(dir, `switchyard-pi-extension-${hash}${extension}`);
    try {
      if ((await readFile(target, "utf8")) === source) return target;
    } catch {
      // not written yet
    }
    await mkdir(dir, { recursive: true });
    // Write then rename: a concurrent Pi never reads a half-written file.
    const temp = `${target}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
    await writeFile(temp, source, { mode: 0o644 });
    await rename(temp, target);
    return target;
  })();
  written.set(cacheDir, pending);
  pending.catch(() => written.delete(cacheDir));
  return pending;
}
