import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveHarnessBinary } from "@switchyard/testkit";

/** An ACP Registry served from 127.0.0.1: `registry.json` plus archives. */
export interface RegistryFixture {
  /** `http://127.0.0.1:<port>/registry.json`. */
  readonly url: string;
  /** `http://127.0.0.1:<port>`, for archive URLs. */
  readonly origin: string;
  /** Replaces the index (`agents` may use `{{origin}}` in archive URLs). */
  setAgents(agents: readonly unknown[]): void;
  /**
   * Serves `body` at `/<name>`; with `holdAfter`, sends that many bytes and then waits for
   * `release(name)` before the rest (a download seen half-way).
   */
  addFile(name: string, body: Buffer, options?: { readonly holdAfter?: number }): void;
  /** Lets a held download finish. */
  release(name: string): void;
  /** How many times `/<name>` was requested. */
  requestsFor(name: string): number;
  /** How many times the index was fetched. */
  readonly indexRequests: number;
  close(): Promise<void>;
}

/** Starts a registry fixture server on 127.0.0.1 (only loopback: nothing leaves the machine). */
export async function startRegistryFixture(agents: readonly unknown[] = []): Promise<RegistryFixture> {
  let current: readonly unknown[] = agents;
  const files = new Map<string, { body: Buffer; holdAfter: number | undefined }>();
  const held = new Map<string, { promise: Promise<void>; release: () => void }>();
  const requests = new Map<string, number>();
  let indexRequests = 0;
  const gate = (name: string) => {
    let entry = held.get(name);
    if (entry === undefined) {
      let release = () => {};
      const promise = new Promise<void>((resolve) => (release = resolve));
      entry = { promise, release };
      held.set(name, entry);
    }
    return entry;
  };
  let origin = "";
  const server: Server = createServer((request, response) => {
    const path = new URL(request.url ?? "/", "http://127.0.0.1").pathname;
    if (path === "/registry.json") {
      indexRequests += 1;
      const body = JSON.stringify({ version: "1.0.0", agents: current, extensions: [] }).replaceAll(
        "{{origin}}",
        origin,
      );
      response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
      response.end(body);
      return;
    }
    const name = path.slice(1);
    const file = files.get(name);
    requests.set(name, (requests.get(name) ?? 0) + 1);
    if (file === undefined) {
      response.writeHead(404).end("not found");
      return;
    }
    response.writeHead(200, { "content-type": "application/octet-stream", "content-length": file.body.length });
    if (file.holdAfter === undefined) {
      response.end(file.body);
      return;
    }
    response.write(file.body.subarray(0, file.holdAfter));
    void gate(name).promise.then(() => response.end(file.body.subarray(file.holdAfter)));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${origin}/registry.json`,
    origin,
    setAgents: (next) => {
      current = next;
    },
    addFile: (name, body, options = {}) => {
      files.set(name, { body, holdAfter: options.holdAfter });
    },
    release: (name) => gate(name).release(),
    requestsFor: (name) => requests.get(name) ?? 0,
    get indexRequests() {
      return indexRequests;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A tar.gz holding one executable `#!/bin/sh` script named `name`, and its SHA-256. */
export function shellScriptArchive(name: string, script: string): { body: Buffer; sha256: string } {
  const dir = mkdtempSync(join(tmpdir(), "acp-registry-archive-"));
  try {
    const file = join(dir, "files", name);
    execFileSync("mkdir", ["-p", join(dir, "files")]);
    writeFileSync(file, script);
    chmodSync(file, 0o755);
    execFileSync("tar", ["-czf", join(dir, "agent.tar.gz"), "-C", join(dir, "files"), name]);
    const body = readFileSync(join(dir, "agent.tar.gz"));
    return { body, sha256: createHash("sha256").update(body).digest("hex") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The two real ACP agents installed from npm, as registry entries and local executables. */
export function realAgents(): {
  readonly entries: readonly unknown[];
  readonly gemini: {
    readonly command: string;
    readonly env: Readonly<Record<string, string>>;
    readonly version: string;
  };
  readonly codexAcp: { readonly command: string; readonly version: string };
} {
  const gemini = resolveHarnessBinary("gemini");
  const codexAcp = resolveHarnessBinary("codex-acp");
  // Both are JS bins with a `#!/usr/bin/env node` line: the bin file itself is the executable a
  // local override names (it runs on the `node` first on PATH: the checkout's pinned one).
  const binOf = (binary: typeof gemini): string => (binary.native ? binary.command : (binary.args[0] as string));
  return {
    entries: [
      {
        id: "gemini",
        name: "Gemini CLI",
        version: gemini.version,
        description: "Google's open-source agent (fixture entry: the registry's npx distribution, ACP over --acp)",
        repository: "https://github.com/google-gemini/gemini-cli",
        distribution: { npx: { package: `@google/gemini-cli@${gemini.version}`, args: ["--acp"] } },
      },
      // The public index's shape since codex-acp moved to the agentclientprotocol org (1.x): an
      // npx distribution of `@agentclientprotocol/codex-acp`, no per-platform binaries (the
      // `@zed-industries/codex-acp` archives the index listed up to 0.11 are gone from it).
      {
        id: "codex-acp",
        name: "Codex CLI",
        version: codexAcp.version,
        description: "ACP adapter for OpenAI's coding assistant",
        repository: "https://github.com/agentclientprotocol/codex-acp",
        authors: ["OpenAI", "JetBrains s.r.o", "Zed Industries"],
        license: "Apache-2.0",
        distribution: { npx: { package: `${codexAcp.packageName}@${codexAcp.version}` } },
      },
    ],
    gemini: { command: binOf(gemini), env: gemini.env, version: gemini.version },
    codexAcp: { command: binOf(codexAcp), version: codexAcp.version },
  };
}
