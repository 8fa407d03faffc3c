import { createHash } from "node:crypto";
import { chmodSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { InteractionMode, RuntimeMode } from "../spec/index.js";
import { readTextFile, writeTextFileAtomically } from "./config-file.js";
import type { ConnectScope, HarnessId } from "./harness-connector.js";

/** One harness wired to Switchyard by `switchyard connect`. */
export interface ConnectionRecord {
  /** `<harness>-<hash of config file and key>`: the same place and key give the same id. */
  readonly id: string;
  readonly harness: HarnessId;
  readonly scope: ConnectScope;
  /** The project folder of a project-scope connection; null for the user's. */
  readonly projectDir: string | null;
  readonly serverName: string;
  readonly configFile: string;
  readonly url: string;
  /** The client token's id (`switchyard token list`). */
  readonly credentialId: string;
  /** The file only the user can read that holds the secret. */
  readonly secretFile: string;
  /** The environment variable the harness reads the token from (set by env.sh), or null. */
  readonly envVar: string | null;
  /** The file holding the rule that approves Switchyard's tools (Claude Code's settings), for harnesses that need one. */
  readonly approvalFile?: string | null;
  /** What the token was issued with, so a re-run with the same options keeps it. */
  readonly grant: {
    readonly verbs: readonly string[];
    readonly projects: readonly string[] | "*";
    readonly ceiling: { readonly runtimeMode: RuntimeMode; readonly interactionMode: InteractionMode };
  };
  readonly connectedAt: string;
}

interface RecordsFile {
  readonly version: 1;
  readonly connections: ConnectionRecord[];
}

/** The folder of connection state in a home: records, secret files, env.sh (0700). */
export function connectionsDir(home: string): string {
  return join(home, "connections");
}

/** The id of a connection: harness and a hash of where its entry lives. */
export function connectionId(harness: HarnessId, configFile: string, serverName: string): string {
  return `${harness}-${createHash("sha256").update(`${configFile}\0${serverName}`).digest("hex").slice(0, 10)}`;
}

/** The connections of a home, kept in `connections/connections.json`. */
export class ConnectionRecords {
  readonly dir: string;
  private readonly file: string;

  constructor(home: string) {
    this.dir = connectionsDir(home);
    this.file = join(this.dir, "connections.json");
  }

  list(): ConnectionRecord[] {
    const text = readTextFile(this.file);
    if (text === null) return [];
    const parsed = JSON.parse(text) as RecordsFile;
    return parsed.connections ?? [];
  }

  find(id: string): ConnectionRecord | undefined {
    return this.list().find((record) => record.id === id);
  }

  /** Makes the folder, readable by the user only. */
  ensureDir(): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    chmodSync(this.dir, 0o700);
  }

  put(record: ConnectionRecord): void {
    this.save([...this.list().filter((existing) => existing.id !== record.id), record]);
  }

  delete(id: string): void {
    this.save(this.list().filter((existing) => existing.id !== id));
  }

  private save(connections: ConnectionRecord[]): void {
    this.ensureDir();
    const body: RecordsFile = { version: 1, connections: [...connections].sort((a, b) => a.id.localeCompare(b.id)) };
    writeTextFileAtomically(this.file, `${JSON.stringify(body, null, 2)}\n`, { mode: 0o600, backup: false });
    writeTextFileAtomically(join(this.dir, "env.sh"), envScript(this.dir, body.connections), {
      mode: 0o600,
      backup: false,
    });
  }
}

/** The environment variable a harness reads its token from: one per harness and config place. */
export function tokenEnvVar(harness: HarnessId, scope: ConnectScope, configFile: string): string {
  const base = `SWITCHYARD_${harness.toUpperCase()}_TOKEN`;
  return scope === "user"
    ? base
    : `${base}_${createHash("sha256").update(configFile).digest("hex").slice(0, 8).toUpperCase()}`;
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * `connections/env.sh`: sourced from a shell profile, it sets each env-delivered harness's
 * token variable from its secret file. It holds paths only, never a token.
 */
function envScript(dir: string, connections: readonly ConnectionRecord[]): string {
  const lines = [
    `# Written by \`switchyard connect\`. Source it from your shell profile: . ${shellQuote(join(dir, "env.sh"))}`,
    "",
  ];
  for (const record of connections) {
    if (record.envVar === null) continue;
    lines.push(`# ${record.harness} (${record.scope}): ${record.configFile}`);
    lines.push(
      `[ -r ${shellQuote(record.secretFile)} ] && export ${record.envVar}="$(cat ${shellQuote(record.secretFile)})"`,
    );
  }
  return `${lines.join("\n")}\n`;
}
