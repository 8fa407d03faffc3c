#!/usr/bin/env node
// Regenerates src/codex-wire/ from the pinned Codex binary: `codex app-server generate-ts`
// (stable API only), then rewrites the generated relative imports for NodeNext resolution
// (`./X` → `./X.js`, `./v2` → `./v2/index.js`). Run with `npm run generate:wire -w @switchyard/plugin-codex`.
// Usage: node scripts/generate-wire.mjs [--out DIR] [--codex PATH]
import { execFileSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const option = (name) => {
  const index = args.indexOf(name);
  return index >= 0 ? args[index + 1] : undefined;
};
const out = resolve(option("--out") ?? join(here, "..", "src", "codex-wire"));

const TRIPLES = {
  "linux-x64": "x86_64-unknown-linux-musl",
  "linux-arm64": "aarch64-unknown-linux-musl",
  "darwin-x64": "x86_64-apple-darwin",
  "darwin-arm64": "aarch64-apple-darwin",
  "win32-x64": "x86_64-pc-windows-msvc",
  "win32-arm64": "aarch64-pc-windows-msvc",
};

/** The native binary of the installed @openai/codex (the version the plugin pins). */
function pinnedCodex() {
  const require = createRequire(join(here, "..", "package.json"));
  const wrapper = require.resolve("@openai/codex/package.json");
  const platformPackage = `@openai/codex-${process.platform}-${process.arch}`;
  const platformJson = createRequire(wrapper).resolve(`${platformPackage}/package.json`);
  const triple = TRIPLES[`${process.platform}-${process.arch}`];
  const binary = join(
    dirname(platformJson),
    "vendor",
    triple,
    "bin",
    process.platform === "win32" ? "codex.exe" : "codex",
  );
  if (!existsSync(binary))
    throw new Error(`The Codex binary is missing at ${binary}; install @openai/codex with its optional dependencies.`);
  return binary;
}

const codex = option("--codex") ?? pinnedCodex();
// A throwaway CODEX_HOME: generation reads no user config and writes nothing to ~/.codex.
const home = mkdtempSync(join(tmpdir(), "codex-wire-home-"));
const staging = mkdtempSync(join(tmpdir(), "codex-wire-out-"));
try {
  const env = { ...process.env, CODEX_HOME: home };
  const version = execFileSync(codex, ["--version"], {
    env,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  }).trim();
  // stderr only carries a harmless warning about helper binaries under a temp CODEX_HOME.
  execFileSync(codex, ["app-server", "generate-ts", "--out", staging], { env, stdio: ["ignore", "ignore", "pipe"] });

  const files = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir).sort()) {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) walk(path);
      else if (entry.endsWith(".ts")) files.push(path);
    }
  };
  walk(staging);
  for (const file of files) {
    const source = readFileSync(file, "utf8");
    const rewritten = source.replace(/from "(\.{1,2}\/[^"]*)"/g, (_match, specifier) => {
      const target = resolve(dirname(file), specifier);
      const isDirectory = existsSync(target) && statSync(target).isDirectory();
      return `from "${specifier}${isDirectory ? "/index.js" : ".js"}"`;
    });
    writeFileSync(file, rewritten);
  }
  rmSync(out, { recursive: true, force: true });
  mkdirSync(dirname(out), { recursive: true });
  cpSync(staging, out, { recursive: true });
  process.stdout.write(`Generated ${files.length} files from ${version} into ${out}\n`);
} finally {
  rmSync(home, { recursive: true, force: true });
  rmSync(staging, { recursive: true, force: true });
}
