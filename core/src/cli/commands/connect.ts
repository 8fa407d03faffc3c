import { resolve } from "node:path";
import type { Command } from "commander";
import { InvalidArgumentError } from "commander";
import {
  INTERACTION_MODES,
  RUNTIME_MODES,
  SwitchyardError,
  type InteractionMode,
  type RuntimeMode,
} from "../../spec/index.js";
import { McpSessionRegistry, type ProjectScope } from "../../services/credentials/mcp-session-registry.js";
import type { SwitchyardHost } from "../../host/switchyard-host.js";
import { checkConnection, type CheckVerdict } from "../../connect/connection-check.js";
import type { ConnectionRecord } from "../../connect/connection-records.js";
import { ConnectionService, credentialState } from "../../connect/connection-service.js";
import {
  HARNESS_IDS,
  type ConnectScope,
  type ConnectionTarget,
  type HarnessId,
} from "../../connect/harness-connector.js";
import { runningServer, type RunningServerInfo } from "../../connect/running-server.js";
import { parseDuration } from "../duration.js";
import { withHost } from "../open-host.js";
import { CliError, EXIT, printJson, printTable, style } from "../output.js";
import {
  DEFAULT_CEILING,
  parseInteractionMode,
  parseProjects,
  parseRuntimeMode,
  parseVerbs,
  type Verb,
} from "./token.js";

/** A connection's token lives 90 days unless `--ttl` says otherwise; `connect` again renews it. */
const DEFAULT_CONNECTION_TTL_MS = 90 * 86_400_000;

function parseHarness(value: string): HarnessId {
  if ((HARNESS_IDS as readonly string[]).includes(value)) return value as HarnessId;
  throw new InvalidArgumentError(
    `"${value}" is not a harness switchyard connect knows; use one of ${HARNESS_IDS.join(", ")}.`,
  );
}

function parseScope(value: string): ConnectScope {
  if (value === "project" || value === "user") return value;
  throw new InvalidArgumentError(
    `"${value}" is not a scope; use project (the project's own config) or user (your config for every project).`,
  );
}

function parseServerName(value: string): string {
  if (/^[A-Za-z0-9_-]{1,64}$/.test(value)) return value;
  throw new InvalidArgumentError(
    `"${value}" cannot be an MCP server key in every harness; use letters, digits, "-" and "_".`,
  );
}

function parseUrl(value: string): string {
  try {
    const url = new URL(value);
    if (url.protocol === "http:" || url.protocol === "https:") return url.href;
  } catch {
    // below
  }
  throw new InvalidArgumentError(
    `"${value}" is not an http(s) URL; pass the MCP endpoint \`switchyard serve\` prints (http://127.0.0.1:<port>/mcp).`,
  );
}

interface PlaceOptions {
  scope?: ConnectScope;
  project?: string;
  name?: string;
  home?: string;
  json?: boolean;
}

interface ConnectOptions extends PlaceOptions {
  url?: string;
  check?: boolean;
  verbs?: Verb[];
  projects?: string[] | "*";
  maxRuntimeMode?: RuntimeMode;
  maxInteractionMode?: InteractionMode;
  ttl?: number;
}

/** `--project <dir>` means project scope; otherwise `--scope`, default user. */
function targetOf(options: PlaceOptions): ConnectionTarget {
  const scope: ConnectScope = options.scope ?? (options.project !== undefined ? "project" : "user");
  if (scope === "user" && options.project !== undefined)
    throw new CliError(
      "--project names a project's config; it goes with --scope project (or leave --scope out).",
      EXIT.usage,
    );
  return { scope, projectDir: resolve(options.project ?? process.cwd()), env: process.env };
}

function serverNameOf(host: SwitchyardHost, options: PlaceOptions): string {
  return options.name ?? host.config.server.mcpServerName;
}

/** Above the server's longest blocking wait (as for provider sessions), so a harness never gives up first. */
function toolTimeoutMs(host: SwitchyardHost): number {
  return host.config.server.maxWaitMs * 2 + 30_000;
}

/** Typed errors from the writers keep their exit codes; a malformed or unwritable file is bad input (2). */
function asCliError(error: unknown): never {
  if (error instanceof SwitchyardError && (error.code === "config_invalid" || error.code === "invalid_input"))
    throw new CliError(error.message, EXIT.usage);
  if (error instanceof SwitchyardError && error.code === "not_found") throw new CliError(error.message, EXIT.usage);
  throw error;
}

function printVerdict(verdict: CheckVerdict, record: ConnectionRecord, displayName: string): void {
  const mark = { ok: style("ok", "green"), failed: style("FAILED", "red"), skipped: style("skipped", "dim") } as const;
  for (const step of verdict.steps)
    process.stdout.write(`  ${step.name.padEnd(8)} ${mark[step.status].padEnd(7)} ${step.detail}\n`);
  process.stdout.write(
    verdict.ok
      ? `${style("Connected:", "green")} ${displayName} (${record.scope}) reaches Switchyard at ${record.url}.\n`
      : `${style("Not working:", "red")} ${displayName} (${record.scope}) cannot use Switchyard; see the FAILED lines above.\n`,
  );
}

async function runCheck(
  host: SwitchyardHost,
  service: ConnectionService,
  record: ConnectionRecord,
  json: boolean | undefined,
): Promise<void> {
  const verdict = await checkConnection({
    service,
    registry: host.container.resolve(McpSessionRegistry),
    record,
    server: runningServer(host.paths.home),
    toolTimeoutMs: toolTimeoutMs(host),
    env: process.env,
  });
  if (json) printJson({ connection: record.id, harness: record.harness, ...verdict });
  else printVerdict(verdict, record, service.connector(record.harness).displayName);
  if (!verdict.ok) process.exitCode = EXIT.failed;
}

function describeDelivery(service: ConnectionService, record: ConnectionRecord): string {
  const connector = service.connector(record.harness);
  if (connector.tokenDelivery === "env") {
    return `${connector.displayName} reads the token from $${record.envVar}. Add this line to your shell profile (it reads the token file, it holds no token):\n    . ${service.records.dir}/env.sh`;
  }
  if (connector.tokenDelivery === "helper")
    return `${connector.displayName} reads the header from the token file through its headersHelper; nothing secret is in the config.`;
  return `${connector.displayName} reads the token file itself; the config holds only its path.`;
}

function placeText(record: ConnectionRecord): string {
  return record.scope === "project" ? `project ${record.projectDir}` : "user";
}

export function registerConnect(program: Command): void {
  program
    .command("connect")
    .argument("<harness>", HARNESS_IDS.join(", "), parseHarness)
    .description(
      `Wire an agent you run yourself (${HARNESS_IDS.join(", ")}) to Switchyard: a scoped, revocable token, and the MCP entry in that harness's own config`,
    )
    .option(
      "--scope <scope>",
      "project (the project's config, e.g. .mcp.json) or user (your config for every project; default)",
      parseScope,
    )
    .option("--project <dir>", "the project folder for --scope project (default: the current folder)")
    .option("--name <key>", "the MCP server key (default: config server.mcpServerName, switchyard)", parseServerName)
    .option(
      "--url <url>",
      "the MCP endpoint (default: the running server's, else http://127.0.0.1:<server.port>/mcp)",
      parseUrl,
    )
    .option(
      "--check",
      "do not write: check the existing connection (entry, token, server, an MCP call, the harness's own listing) and print a verdict",
    )
    .option(
      "--verbs <verbs>",
      "what the token may do: read, operate, approve, comma-separated (default read,operate)",
      parseVerbs,
    )
    .option(
      "--projects <projects>",
      'the Switchyard projects the token may use: ids or folders, comma-separated, or "*" (default *)',
      parseProjects,
    )
    .option(
      "--max-runtime-mode <mode>",
      `the token's runtime mode ceiling: ${RUNTIME_MODES.join(", ")} (default ${DEFAULT_CEILING.runtimeMode})`,
      parseRuntimeMode,
    )
    .option(
      "--max-interaction-mode <mode>",
      `the token's interaction mode ceiling: ${INTERACTION_MODES.join(" or ")} (default ${DEFAULT_CEILING.interactionMode})`,
      parseInteractionMode,
    )
    .option(
      "--ttl <duration>",
      "the token's lifetime, at most 365d (default 90d); connect again to renew",
      parseDuration,
    )
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(connect);

  program
    .command("disconnect")
    .argument("<harness>", HARNESS_IDS.join(", "), parseHarness)
    .description("Remove a harness's Switchyard entry (what connect wrote) and revoke its token")
    .option("--scope <scope>", "project or user (default user, or project with --project)", parseScope)
    .option("--project <dir>", "the project folder for --scope project (default: the current folder)")
    .option("--name <key>", "the MCP server key (default: config server.mcpServerName)", parseServerName)
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(disconnect);

  program
    .command("connections")
    .description("List the harnesses connect wired to Switchyard: where, and whether the entry and token still hold")
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(listConnections);
}

/** `switchyard connect <harness>`: writes the entry and a token, or (`--check`) checks what was written. */
async function connect(harness: HarnessId, options: ConnectOptions): Promise<void> {
  const target = targetOf(options);
  await withHost(options, async (host) => {
    const service = new ConnectionService(host.paths.home, host.container.resolve(McpSessionRegistry));
    const serverName = serverNameOf(host, options);
    const displayName = service.connector(harness).displayName;
    if (options.check) {
      const record = service.find(harness, target, serverName);
      if (record === undefined) {
        throw new CliError(
          `${displayName} is not connected at ${service.connector(harness).configFile(target)} (${target.scope}). Run \`switchyard connect ${harness}\` first.`,
          EXIT.notFound,
        );
      }
      await runCheck(host, service, record, options.json);
      return;
    }
    await writeConnection(host, service, { harness, target, serverName, displayName }, options);
  });
}

/** Where a connection is written: the harness, its config, the MCP server key. */
interface ConnectionPlace {
  readonly harness: HarnessId;
  readonly target: ConnectionTarget;
  readonly serverName: string;
  readonly displayName: string;
}

/** Writes (or renews) the harness's entry and token, and says what changed. */
async function writeConnection(
  host: SwitchyardHost,
  service: ConnectionService,
  place: ConnectionPlace,
  options: ConnectOptions,
): Promise<void> {
  const { harness, target, serverName, displayName } = place;
  const server: RunningServerInfo | null = runningServer(host.paths.home);
  const url = options.url ?? server?.mcpUrl ?? `http://127.0.0.1:${host.config.server.port}/mcp`;
  const projects = await grantProjects(host, options.projects);
  const outcome = await service
    .connect({
      harness,
      target,
      serverName,
      url,
      toolTimeoutMs: toolTimeoutMs(host),
      grant: {
        verbs: connectionVerbs(options.verbs),
        projects,
        ceiling: {
          runtimeMode: options.maxRuntimeMode ?? DEFAULT_CEILING.runtimeMode,
          interactionMode: options.maxInteractionMode ?? DEFAULT_CEILING.interactionMode,
        },
        ttlMs: options.ttl ?? DEFAULT_CONNECTION_TTL_MS,
      },
    })
    .catch(asCliError);
  const { record } = outcome;
  if (options.json) {
    printJson({
      ...record,
      configChanged: outcome.configChanged,
      tokenIssued: outcome.tokenIssued,
      replacedCredentialId: outcome.replacedCredentialId,
      serverRunning: server !== null,
    });
    return;
  }
  const lines: string[] = [];
  if (!outcome.configChanged && !outcome.tokenIssued)
    lines.push(`${displayName} (${placeText(record)}) is already connected; nothing changed.`);
  else lines.push(`Connected ${displayName} (${placeText(record)}) to Switchyard at ${record.url}.`);
  lines.push(
    `  entry: "${record.serverName}" in ${record.configFile}${outcome.configChanged ? " (a copy of the old file is beside it, .switchyard-backup)" : ""}`,
  );
  lines.push(
    `  token: ${record.credentialId} (${record.grant.verbs.join(", ")}; ceiling ${record.grant.ceiling.runtimeMode}/${record.grant.ceiling.interactionMode}) in ${record.secretFile}, readable only by you${outcome.replacedCredentialId ? `; replaced ${outcome.replacedCredentialId}, now revoked` : ""}`,
  );
  lines.push(`  ${describeDelivery(service, record)}`);
  if (server === null)
    lines.push(
      style(
        `  No Switchyard server runs on ${host.paths.home} yet: start it with \`switchyard serve\`; the entry points at ${record.url}.`,
        "yellow",
      ),
    );
  lines.push(
    `  Check it with: switchyard connect ${harness}${record.scope === "project" ? ` --project ${record.projectDir}` : ""} --check`,
  );
  process.stdout.write(`${lines.join("\n")}\n`);
}

/** The projects a connection's token may use: every one, or those `--projects` names (ids or folders). */
async function grantProjects(host: SwitchyardHost, named: string[] | "*" | undefined): Promise<ProjectScope> {
  if (named === undefined || named === "*") return "*";
  const ids: string[] = [];
  for (const idOrPath of named) {
    const project = await host.projects.find(idOrPath);
    if (project === null)
      throw new CliError(
        `No project has the id or folder ${idOrPath}. Run \`switchyard project list\` to see them, or \`switchyard project add\` to add it.`,
        EXIT.usage,
      );
    ids.push(project.id);
  }
  return ids;
}

/** `switchyard disconnect <harness>`: removes the entry and revokes its token. */
async function disconnect(harness: HarnessId, options: PlaceOptions): Promise<void> {
  const target = targetOf(options);
  await withHost(options, (host) => {
    const service = new ConnectionService(host.paths.home, host.container.resolve(McpSessionRegistry));
    const record = service.find(harness, target, serverNameOf(host, options));
    const displayName = service.connector(harness).displayName;
    if (record === undefined) {
      throw new CliError(
        `${displayName} is not connected at ${service.connector(harness).configFile(target)} (${target.scope}). \`switchyard connections\` lists what is.`,
        EXIT.notFound,
      );
    }
    let outcome: { entryRemoved: boolean; revoked: boolean };
    try {
      outcome = service.disconnect(record);
    } catch (error) {
      asCliError(error);
    }
    if (options.json) {
      printJson({
        id: record.id,
        harness,
        configFile: record.configFile,
        credentialId: record.credentialId,
        ...outcome,
      });
      return;
    }
    process.stdout.write(
      `Disconnected ${displayName} (${placeText(record)}): ${outcome.entryRemoved ? `removed "${record.serverName}" from ${record.configFile}` : `${record.configFile} had no entry left`}; token ${record.credentialId} ${outcome.revoked ? "revoked" : "was already revoked"}.\n`,
    );
  });
}

/** `switchyard connections`: what connect wired, and whether the entry and token still hold. */
async function listConnections(options: { home?: string; json?: boolean }): Promise<void> {
  await withHost(options, async (host) => {
    const registry = host.container.resolve(McpSessionRegistry);
    const service = new ConnectionService(host.paths.home, registry);
    const server = runningServer(host.paths.home);
    const rows = [];
    // One after another, in the records' order (each token's state is a read).
    for (const record of service.records.list())
      rows.push({
        ...record,
        token: await credentialState(registry, record.credentialId),
        entry: service.entryState(record, toolTimeoutMs(host)),
        server:
          server === null ? "not running" : server.mcpUrl === record.url ? "running" : `running at ${server.mcpUrl}`,
      });
    if (options.json) {
      printJson(rows);
      return;
    }
    if (rows.length === 0) {
      process.stdout.write(
        `Nothing is connected yet. Connect an agent with: switchyard connect <${HARNESS_IDS.join("|")}>\n`,
      );
      return;
    }
    const tokenStyle = { active: "green", revoked: "red", expired: "yellow", missing: "red" } as const;
    printTable(
      ["HARNESS", "SCOPE", "CONFIG", "ENTRY", "TOKEN", "SERVER"],
      rows.map((row) => [
        row.harness,
        row.scope,
        row.configFile,
        row.entry === "as-written" ? "ok" : style(row.entry, "yellow"),
        style(`${row.token} (${row.credentialId})`, tokenStyle[row.token]),
        row.server,
      ]),
    );
  });
}

/** A connected harness is an agent's session: it never installs for the whole server. */
function connectionVerbs(verbs: Verb[] | undefined): Exclude<Verb, "install">[] {
  if (verbs?.includes("install"))
    throw new CliError(
      "A connected harness does not install for the whole server: drop install from --verbs (use switchyard token issue --verbs read,install for a token that does).",
      EXIT.usage,
    );
  return (verbs ?? ["read", "operate"]) as Exclude<Verb, "install">[];
}
