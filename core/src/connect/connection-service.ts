import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { SwitchyardError } from "../spec/index.js";
import type {
  CredentialCapability,
  McpSessionRegistry,
  ModeCeiling,
  ProjectScope,
} from "../services/credentials/mcp-session-registry.js";
import { readTextFile, removeFile, writeTextFileAtomically } from "./config-file.js";
import { connectionId, ConnectionRecords, tokenEnvVar, type ConnectionRecord } from "./connection-records.js";
import { HARNESS_CONNECTORS } from "./harness-catalog.js";
import type { ConnectionTarget, EntrySpec, HarnessConnector, HarnessId } from "./harness-connector.js";
import { MalformedJsonError } from "../util/jsonc-edit.js";
import { MalformedTomlError } from "./toml-table-edit.js";
import { makePrivateDir, PRIVATE_FILE_MODE } from "../util/private-files.js";

/** What a client token for a harness is issued with. */
export interface ConnectGrant {
  readonly verbs: readonly ("read" | "operate" | "approve")[];
  readonly projects: ProjectScope;
  readonly ceiling: ModeCeiling;
  readonly ttlMs: number;
}

/** What `connect` did. */
export interface ConnectOutcome {
  readonly record: ConnectionRecord;
  /** The config file's text changed (false on a re-run with nothing new). */
  readonly configChanged: boolean;
  /** A token was issued (false when the connection's token was still good and kept). */
  readonly tokenIssued: boolean;
  /** The token this run replaced (revoked), if any. */
  readonly replacedCredentialId: string | null;
}

const CAPABILITY_OF = {
  read: "orchestration:read",
  operate: "orchestration:operate",
  approve: "orchestration:approve",
} as const satisfies Record<string, CredentialCapability>;

/** A harness config that cannot be read as its format: refused, never overwritten. */
function malformed(file: string, error: Error): SwitchyardError {
  return new SwitchyardError(
    "config_invalid",
    `${file} is not valid (${error.message}). Nothing was changed: fix the file or move it aside, then run again.`,
    { file },
  );
}

function parsing<T>(file: string, run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (error instanceof MalformedJsonError || error instanceof MalformedTomlError) throw malformed(file, error);
    throw error;
  }
}

function sameGrant(record: ConnectionRecord, grant: ConnectGrant): boolean {
  return (
    JSON.stringify(record.grant) ===
    JSON.stringify({
      verbs: [...grant.verbs],
      projects: grant.projects,
      ceiling: { runtimeMode: grant.ceiling.runtimeMode, interactionMode: grant.ceiling.interactionMode },
    })
  );
}

/** Whether a client token is still good: known, not revoked, not expired. */
export async function credentialState(
  registry: McpSessionRegistry,
  credentialId: string,
  nowMs = Date.now(),
): Promise<"active" | "revoked" | "expired" | "missing"> {
  const token = (await registry.list()).find((candidate) => candidate.id === credentialId);
  if (token === undefined) return "missing";
  if (token.revokedAt !== null) return "revoked";
  return Date.parse(token.expiresAt) <= nowMs ? "expired" : "active";
}

/**
 * Wires harnesses to Switchyard: a client token per connection, its secret in a file only the
 * user can read, and the entry in the harness's own config, edited in place. A re-run with the
 * same options changes nothing; a malformed config is refused before any token is issued.
 */
export class ConnectionService {
  readonly records: ConnectionRecords;

  constructor(
    private readonly home: string,
    private readonly registry: McpSessionRegistry,
  ) {
    this.records = new ConnectionRecords(home);
  }

  connector(harness: HarnessId): HarnessConnector {
    return HARNESS_CONNECTORS[harness];
  }

  /** The spec of an entry at a place, with the secret's deterministic path. */
  specFor(
    harness: HarnessId,
    target: ConnectionTarget,
    serverName: string,
    url: string,
    toolTimeoutMs: number,
  ): { id: string; configFile: string; spec: EntrySpec } {
    const connector = this.connector(harness);
    const configFile = connector.configFile(target);
    const id = connectionId(harness, configFile, serverName);
    return {
      id,
      configFile,
      spec: {
        serverName,
        url,
        toolTimeoutMs,
        secretFile: join(this.records.dir, `${id}${connector.secretSuffix}`),
        envVar: tokenEnvVar(harness, target.scope, configFile),
        supportDir: join(this.records.dir, "support"),
      },
    };
  }

  async connect(input: {
    harness: HarnessId;
    target: ConnectionTarget;
    serverName: string;
    url: string;
    toolTimeoutMs: number;
    grant: ConnectGrant;
  }): Promise<ConnectOutcome> {
    const connector = this.connector(input.harness);
    const { id, configFile, spec } = this.specFor(
      input.harness,
      input.target,
      input.serverName,
      input.url,
      input.toolTimeoutMs,
    );
    // Everything that can refuse runs before a token exists.
    const current = readTextFile(configFile);
    const next = parsing(configFile, () => connector.apply(current, spec));
    const supportFiles = connector.supportFiles ? await connector.supportFiles(spec) : [];
    const approval = connector.toolApproval;
    const approvalFile = approval?.file(input.target) ?? null;
    const approvalNext =
      approval !== undefined && approvalFile !== null
        ? parsing(approvalFile, () => approval.apply(readTextFile(approvalFile), spec))
        : null;

    const previous = this.records.find(id);
    const keep =
      previous !== undefined &&
      sameGrant(previous, input.grant) &&
      (await credentialState(this.registry, previous.credentialId)) === "active" &&
      existsSync(previous.secretFile) &&
      previous.secretFile === spec.secretFile;
    this.records.ensureDir();
    let credentialId = previous?.credentialId ?? "";
    let issuedId: string | null = null;
    const previousSecret = readTextFile(spec.secretFile);
    if (!keep) {
      const issued = this.registry.issueClientToken({
        ttlMs: input.grant.ttlMs,
        capabilities: input.grant.verbs.map((verb) => CAPABILITY_OF[verb]),
        projects: input.grant.projects,
        ceiling: input.grant.ceiling,
        label: `connect ${input.harness} (${input.target.scope}${input.target.scope === "project" ? ` ${input.target.projectDir}` : ""})`,
        // A project-scope connection's folder is where its agent's new work goes when nothing else says.
        connection: {
          harness: input.harness,
          projectDir: input.target.scope === "project" ? input.target.projectDir : null,
        },
      });
      issuedId = issued.id;
      credentialId = issued.id;
      writeTextFileAtomically(spec.secretFile, connector.secretContent(issued.token), { mode: 0o600, backup: false });
    }
    let configChanged: boolean;
    try {
      for (const support of supportFiles) {
        // Support files live under connections/ in the home (Pi's extension copy): private like it.
        makePrivateDir(dirname(support.file));
        writeTextFileAtomically(support.file, support.text, { mode: PRIVATE_FILE_MODE, backup: false });
      }
      configChanged = writeTextFileAtomically(configFile, next);
      if (approvalFile !== null && approvalNext !== null)
        configChanged = writeTextFileAtomically(approvalFile, approvalNext) || configChanged;
    } catch (error) {
      // Nothing half-done: the new token is revoked and the secret file is as it was.
      if (issuedId !== null) {
        this.registry.revoke(issuedId);
        if (previousSecret === null) removeFile(spec.secretFile);
        else writeTextFileAtomically(spec.secretFile, previousSecret, { mode: 0o600, backup: false });
      }
      throw error;
    }
    const record: ConnectionRecord = {
      id,
      harness: input.harness,
      scope: input.target.scope,
      projectDir: input.target.scope === "project" ? input.target.projectDir : null,
      serverName: input.serverName,
      configFile,
      url: input.url,
      credentialId,
      secretFile: spec.secretFile,
      envVar: connector.tokenDelivery === "env" ? spec.envVar : null,
      ...(approvalFile !== null ? { approvalFile } : {}),
      grant: {
        verbs: [...input.grant.verbs],
        projects: input.grant.projects,
        ceiling: { runtimeMode: input.grant.ceiling.runtimeMode, interactionMode: input.grant.ceiling.interactionMode },
      },
      connectedAt: keep && previous !== undefined && !configChanged ? previous.connectedAt : new Date().toISOString(),
    };
    if (!(keep && previous !== undefined && JSON.stringify(previous) === JSON.stringify(record)))
      this.records.put(record);
    let replaced: string | null = null;
    if (issuedId !== null && previous !== undefined && previous.credentialId !== issuedId) {
      this.registry.revoke(previous.credentialId);
      replaced = previous.credentialId;
    }
    return { record, configChanged, tokenIssued: issuedId !== null, replacedCredentialId: replaced };
  }

  /** Removes the entry, the secret and the record, and revokes the token. */
  disconnect(record: ConnectionRecord): { entryRemoved: boolean; revoked: boolean } {
    const connector = this.connector(record.harness);
    const current = readTextFile(record.configFile);
    let entryRemoved = false;
    if (current !== null) {
      const next = parsing(record.configFile, () => connector.remove(current, record));
      if (next !== current) {
        if (next === "") removeFile(record.configFile);
        else writeTextFileAtomically(record.configFile, next);
        entryRemoved = true;
      }
    }
    const approval = connector.toolApproval;
    const approvalText = record.approvalFile ? readTextFile(record.approvalFile) : null;
    if (approval !== undefined && record.approvalFile && approvalText !== null) {
      const without = parsing(record.approvalFile, () => approval.remove(approvalText, record));
      if (without !== approvalText) writeTextFileAtomically(record.approvalFile, without);
    }
    const revoked = this.registry.revoke(record.credentialId);
    removeFile(record.secretFile);
    this.records.delete(record.id);
    return { entryRemoved, revoked };
  }

  /** The record of the connection at a place, if `connect` made one. */
  find(harness: HarnessId, target: ConnectionTarget, serverName: string): ConnectionRecord | undefined {
    const configFile = this.connector(harness).configFile(target);
    return this.records.find(connectionId(harness, configFile, serverName));
  }

  /** What the config file holds for a connection now: the entry as written, changed, missing, or a file that no longer parses. */
  entryState(record: ConnectionRecord, toolTimeoutMs: number): "as-written" | "changed" | "missing" | "unreadable" {
    const connector = this.connector(record.harness);
    const text = readTextFile(record.configFile);
    if (text === null) return "missing";
    let found: unknown;
    try {
      found = connector.read(text, record);
    } catch {
      return "unreadable";
    }
    if (found === undefined) return "missing";
    const { spec } = this.specFor(
      record.harness,
      { scope: record.scope, projectDir: record.projectDir ?? "", env: {} },
      record.serverName,
      record.url,
      toolTimeoutMs,
    );
    const expected = connector.expected({
      ...spec,
      secretFile: record.secretFile,
      envVar: record.envVar ?? spec.envVar,
    });
    if (JSON.stringify(found) !== JSON.stringify(expected)) return "changed";
    // The rule that lets the harness run the tools headless is part of what connect wrote.
    const approval = connector.toolApproval;
    if (approval !== undefined && record.approvalFile) {
      const rules = readTextFile(record.approvalFile);
      try {
        if (rules === null || !approval.present(rules, record)) return "changed";
      } catch {
        return "unreadable";
      }
    }
    return "as-written";
  }

  /** The token of a connection, read back from its secret file; null when the file is gone or empty. */
  tokenOf(record: ConnectionRecord): string | null {
    const text = readTextFile(record.secretFile);
    if (text === null) return null;
    try {
      return this.connector(record.harness).tokenFromSecret(text);
    } catch {
      return null;
    }
  }

  get homeDir(): string {
    return this.home;
  }
}
