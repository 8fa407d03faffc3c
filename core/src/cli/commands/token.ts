import type { Command } from "commander";
import { InvalidArgumentError } from "commander";
import {
  INTERACTION_MODES,
  isInteractionMode,
  isRuntimeMode,
  RUNTIME_MODES,
  type InteractionMode,
  type RuntimeMode,
} from "../../spec/index.js";
import {
  McpSessionRegistry,
  type CredentialCapability,
  type CredentialSummary,
  type ModeCeiling,
  type ProjectScope,
} from "../../services/credentials/mcp-session-registry.js";
import { ScheduleStanding } from "../../services/scheduling/schedule-standing.js";
import { parseDuration } from "../duration.js";
import { withHost } from "../open-host.js";
import { CliError, EXIT, printJson, printTable, style } from "../output.js";
import { projectIdOf } from "../thread-arguments.js";

/** The verbs `token issue --verbs` takes, and the capability each grants. operate, approve and install each include read. */
export const VERBS = {
  read: "orchestration:read",
  operate: "orchestration:operate",
  approve: "orchestration:approve",
  install: "orchestration:install",
} as const satisfies Record<string, CredentialCapability>;
export type Verb = keyof typeof VERBS;

/** The legacy `--scope` names (before verbs): read, or operate (with read). */
const SCOPES = ["orchestration:read", "orchestration:operate"] as const;
type Scope = (typeof SCOPES)[number];

const DEFAULT_TTL_MS = 30 * 86_400_000;
const DEFAULT_VERBS: readonly Verb[] = ["read", "operate"];
/**
 * A token's ceiling when `token issue` is not told one: the narrowest runtime mode, so a token
 * never lets work run without approvals unless the user says so. The interaction mode stays
 * `default` (plan-only threads could not act at all).
 */
export const DEFAULT_CEILING: ModeCeiling = { runtimeMode: "approval-required", interactionMode: "default" };

export function parseVerbs(value: string): Verb[] {
  const verbs = value
    .split(",")
    .map((verb) => verb.trim())
    .filter((verb) => verb !== "");
  if (verbs.length === 0)
    throw new InvalidArgumentError("Name at least one verb: read, operate, approve or install (comma-separated).");
  for (const verb of verbs) {
    if (!(verb in VERBS))
      throw new InvalidArgumentError(
        `"${verb}" is not a verb; use read, operate, approve or install (comma-separated, e.g. read,operate).`,
      );
  }
  return [...new Set(verbs as Verb[])];
}

function parseScope(value: string): Scope {
  if ((SCOPES as readonly string[]).includes(value)) return value as Scope;
  throw new InvalidArgumentError(
    `"${value}" is not a scope; use orchestration:read or orchestration:operate (or --verbs read,operate,approve).`,
  );
}

export function parseProjects(value: string): string[] | "*" {
  const projects = value
    .split(",")
    .map((project) => project.trim())
    .filter((project) => project !== "");
  if (projects.length === 0)
    throw new InvalidArgumentError(
      'Name at least one project (an id or folder, comma-separated), or "*" for every project.',
    );
  if (projects.includes("*")) {
    if (projects.length > 1) throw new InvalidArgumentError('"*" already means every project; pass it alone.');
    return "*";
  }
  return projects;
}

export function parseRuntimeMode(value: string): RuntimeMode {
  if (isRuntimeMode(value)) return value;
  throw new InvalidArgumentError(
    `"${value}" is not a runtime mode; use ${RUNTIME_MODES.join(", ")} (narrowest first).`,
  );
}

export function parseInteractionMode(value: string): InteractionMode {
  if (isInteractionMode(value)) return value;
  throw new InvalidArgumentError(
    `"${value}" is not an interaction mode; use ${INTERACTION_MODES.join(" or ")} (narrowest first).`,
  );
}

/** The verbs a token holds, named as `token issue --verbs` names them. */
function verbsOf(token: Pick<CredentialSummary, "capabilities">): Verb[] {
  return (Object.keys(VERBS) as Verb[]).filter((verb) => token.capabilities.includes(VERBS[verb]));
}

/** The legacy scope name of a token (`orchestration:operate` when it may operate). */
function scopeOf(token: Pick<CredentialSummary, "capabilities">): Scope {
  return token.capabilities.includes("orchestration:operate") ? "orchestration:operate" : "orchestration:read";
}

/** The install verb is server-wide: a token held to some projects never gets it. */
export function requireServerWideInstall(verbs: readonly Verb[], projects: string[] | "*" | undefined): void {
  if (verbs.includes("install") && projects !== undefined && projects !== "*") {
    throw new CliError(
      "The install verb installs for the whole server, so it needs --projects '*' (the default); issue a separate token for the projects.",
      EXIT.usage,
    );
  }
}

function projectsText(projects: ProjectScope): string {
  return projects === "*" ? "*" : projects.join(",");
}

function ceilingText(ceiling: ModeCeiling | null): string {
  return ceiling === null ? "" : `${ceiling.runtimeMode}/${ceiling.interactionMode}`;
}

type TokenStatus = "active" | "expired" | "revoked";

function statusOf(token: CredentialSummary, nowMs: number): TokenStatus {
  if (token.revokedAt !== null) return "revoked";
  return Date.parse(token.expiresAt) <= nowMs ? "expired" : "active";
}

const STATUS_STYLE = { active: "green", expired: "yellow", revoked: "dim" } as const;

interface IssueOptions {
  ttl?: number;
  verbs?: Verb[];
  scope?: Scope;
  projects?: string[] | "*";
  maxRuntimeMode?: RuntimeMode;
  maxInteractionMode?: InteractionMode;
  label?: string;
  home?: string;
  json?: boolean;
}

export function registerToken(program: Command): void {
  const token = program
    .command("token")
    .description("Bearer tokens for outside programs (the HTTP API and MCP clients: CLI, scripts, other machines)");
  token
    .command("issue")
    .description(
      "Issue a token; it is printed once and only its hash is stored. Its verbs, projects, mode ceiling and expiry bound everything it does.",
    )
    .option(
      "--verbs <verbs>",
      "what it may do, comma-separated: read, operate (send, create, stop, answer questions), approve (answer approvals), install (server-wide installs: the ACP Registry's install jobs; needs --projects '*'); operate, approve and install include read (default read,operate). Without install, only an operate token for every project with --max-runtime-mode full-access may start installs",
      parseVerbs,
    )
    .option(
      "--projects <projects>",
      'the projects it may use: ids or folders, comma-separated, or "*" for every project (default *)',
      parseProjects,
    )
    .option(
      "--max-runtime-mode <mode>",
      `the broadest runtime mode its threads may have, and the mode they get when none is asked for: ${RUNTIME_MODES.join(", ")} (default ${DEFAULT_CEILING.runtimeMode})`,
      parseRuntimeMode,
    )
    .option(
      "--max-interaction-mode <mode>",
      `the broadest interaction mode: ${INTERACTION_MODES.join(" or ")} (default ${DEFAULT_CEILING.interactionMode})`,
      parseInteractionMode,
    )
    .option(
      "--ttl <duration>",
      "lifetime: a number and a unit s, m, h, d or w, at most 365d (default 30d)",
      parseDuration,
    )
    .option(
      "--scope <scope>",
      "the older way to name verbs: orchestration:read or orchestration:operate (= --verbs read,operate)",
      parseScope,
    )
    .option("--label <label>", "a name to recognise it in `token list`")
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(issueToken);
  token
    .command("list")
    .description(
      "List client tokens (never the tokens themselves): verbs, projects, ceiling, and whether they are active or expired; --all adds revoked ones and the CLI's own per-command tokens",
    )
    .option(
      "--all",
      "also revoked tokens, and the ephemeral ones a command (switchyard threads, run) holds while it runs",
    )
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(listTokens);
  token
    .command("revoke <id>")
    .description("Revoke a token by id; the scheduled tasks that run under it are paused")
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(revokeToken);
}

/** `switchyard token issue`: prints a new client token once. */
async function issueToken(options: IssueOptions): Promise<void> {
  if (options.scope !== undefined && options.verbs !== undefined)
    throw new CliError(
      "Pass --verbs or --scope, not both (--scope orchestration:operate is --verbs read,operate).",
      EXIT.usage,
    );
  const verbs =
    options.verbs ??
    (options.scope === "orchestration:read"
      ? ["read"]
      : options.scope === "orchestration:operate"
        ? ["read", "operate"]
        : DEFAULT_VERBS);
  const ceiling: ModeCeiling = {
    runtimeMode: options.maxRuntimeMode ?? DEFAULT_CEILING.runtimeMode,
    interactionMode: options.maxInteractionMode ?? DEFAULT_CEILING.interactionMode,
  };
  requireServerWideInstall(verbs, options.projects);
  await withHost(options, async (host) => {
    let projects: ProjectScope = "*";
    if (options.projects !== undefined && options.projects !== "*") {
      const ids: string[] = [];
      for (const idOrPath of options.projects) ids.push(await projectIdOf(host, idOrPath));
      projects = ids;
    }
    const issued = host.container.resolve(McpSessionRegistry).issueClientToken({
      ttlMs: options.ttl ?? DEFAULT_TTL_MS,
      capabilities: verbs.map((verb) => VERBS[verb]),
      projects,
      ceiling,
      label: options.label ?? null,
    });
    const summary = {
      verbs: verbsOf(issued),
      projects: issued.projects,
      ceiling: issued.ceiling,
      scope: scopeOf(issued),
    };
    if (options.json) {
      printJson({ id: issued.id, token: issued.token, expiresAt: issued.expiresAt, ...summary });
      return;
    }
    process.stdout.write(`${issued.token}\n`);
    process.stderr.write(
      [
        `Token ${issued.id} expires ${issued.expiresAt}. It is shown only now; store it safely.`,
        `  verbs: ${summary.verbs.join(", ")}`,
        `  projects: ${summary.projects === "*" ? "every project" : summary.projects.join(", ")}`,
        `  ceiling: runtime ${ceiling.runtimeMode}, interaction ${ceiling.interactionMode}: threads it creates without naming modes get these, and it cannot start or change broader work${options.maxRuntimeMode === undefined ? " (--max-runtime-mode full-access allows more)" : ""}.`,
        "",
      ].join("\n"),
    );
  });
}

/** `switchyard token list`: client tokens, never the tokens themselves. */
async function listTokens(options: { all?: boolean; home?: string; json?: boolean }): Promise<void> {
  await withHost(options, async (host) => {
    const now = Date.now();
    const all = (await host.container.resolve(McpSessionRegistry).list()).map((t) => ({
      ...t,
      verbs: verbsOf(t),
      scope: scopeOf(t),
      status: statusOf(t, now),
    }));
    const tokens = options.all ? all : all.filter((t) => t.status !== "revoked" && !t.ephemeral);
    const hidden = all.length - tokens.length;
    if (options.json) printJson(tokens);
    else if (tokens.length === 0)
      process.stdout.write(
        `No ${hidden > 0 ? "active or expired " : ""}client tokens${hidden > 0 ? ` (${hidden} revoked or ephemeral: --all shows them)` : " yet"}. Issue one with: switchyard token issue\n`,
      );
    else {
      printTable(
        ["ID", "LABEL", "VERBS", "PROJECTS", "CEILING", "STATUS", "EXPIRES", "REVOKED"],
        tokens.map((t) => [
          t.id,
          t.label ?? "",
          t.verbs.join(","),
          projectsText(t.projects),
          ceilingText(t.ceiling),
          style(t.status, STATUS_STYLE[t.status]),
          t.expiresAt,
          t.revokedAt ?? "",
        ]),
      );
      if (hidden > 0)
        process.stderr.write(
          style(`(${hidden} revoked or ephemeral not shown: --all shows them)\n`, "dim", process.stderr),
        );
    }
  });
}

/** `switchyard token revoke <id>`: revokes a token and pauses the scheduled tasks under it. */
async function revokeToken(id: string, options: { home?: string; json?: boolean }): Promise<void> {
  await withHost(options, async (host) => {
    const registry = host.container.resolve(McpSessionRegistry);
    const revoked = registry.revoke(id);
    const known = (await registry.list()).find((t) => t.id === id);
    if (!revoked && known === undefined)
      throw new CliError(`No client token has id ${id}. Run \`switchyard token list\` to see them.`, EXIT.notFound);
    // Also after an earlier revoke: a task it left enabled (resumed under it by an older version) stops now.
    const paused = await host.container.resolve(ScheduleStanding).pauseTasksOf({ kind: "token", credentialId: id });
    if (options.json) {
      printJson({ id, revoked, revokedAt: known?.revokedAt ?? null, pausedSchedules: paused });
      return;
    }
    process.stdout.write(revoked ? `Revoked ${id}\n` : `${id} was already revoked (${known!.revokedAt}).\n`);
    process.stdout.write(
      paused === 0
        ? "No scheduled task runs under it.\n"
        : `Paused ${paused} scheduled task${paused === 1 ? "" : "s"} that ran under it; \`switchyard schedules list\` shows them, and \`switchyard schedules resume <id>\` (or anyone who may change them) resumes one under their own credential.\n`,
    );
  });
}
