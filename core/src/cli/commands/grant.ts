import type { Command } from "commander";
import { InvalidArgumentError } from "commander";
import { isRuntimeMode, RUNTIME_MODES, type RuntimeMode } from "../../spec/index.js";
import type { ProjectScope } from "../../services/credentials/mcp-session-registry.js";
import { GRANT_VERBS, type GrantVerb, type ReachGrant } from "../../services/credentials/reach-grant.js";
import { ReachGrants } from "../../services/reach/reach-grants.js";
import { ScheduleStanding } from "../../services/scheduling/schedule-standing.js";
import { parseDuration } from "../duration.js";
import { withHost } from "../open-host.js";
import { printJson, printTable, style } from "../output.js";
import { projectIdOf } from "../thread-arguments.js";

const DEFAULT_TTL_MS = 30 * 86_400_000;
/** Like a token's: work another machine starts runs with approvals unless the user says otherwise. */
const DEFAULT_MAX_RUNTIME_MODE: RuntimeMode = "approval-required";

function parseVerbs(value: string): GrantVerb[] {
  const verbs = value
    .split(",")
    .map((verb) => verb.trim())
    .filter((verb) => verb !== "");
  if (verbs.length === 0)
    throw new InvalidArgumentError(`Name at least one verb: ${GRANT_VERBS.join(", ")} (comma-separated).`);
  for (const verb of verbs) {
    if (!(GRANT_VERBS as readonly string[]).includes(verb))
      throw new InvalidArgumentError(
        `"${verb}" is not a grant verb; use ${GRANT_VERBS.join(", ")} (comma-separated, e.g. read,delegate).`,
      );
  }
  return [...new Set(verbs as GrantVerb[])];
}

function parseProjects(value: string): string[] | "*" {
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

function parseRuntimeMode(value: string): RuntimeMode {
  if (isRuntimeMode(value)) return value;
  throw new InvalidArgumentError(
    `"${value}" is not a runtime mode; use ${RUNTIME_MODES.join(", ")} (narrowest first).`,
  );
}

type GrantStatus = "active" | "expired" | "revoked";

function statusOf(grant: ReachGrant, nowMs: number): GrantStatus {
  if (grant.revokedAt !== null) return "revoked";
  return Date.parse(grant.expiresAt) <= nowMs ? "expired" : "active";
}

const STATUS_STYLE = { active: "green", expired: "yellow", revoked: "dim" } as const;

interface IssueOptions {
  for: string;
  projects: string[] | "*";
  verbs: GrantVerb[];
  maxRuntimeMode?: RuntimeMode;
  profiles?: string[];
  ttl?: number;
  home?: string;
  json?: boolean;
}

export function registerGrant(program: Command): void {
  const grant = program
    .command("grant")
    .description(
      "Grants: what another Switchyard environment (a linked machine) may do here; only this command issues, lists and revokes them",
    );
  grant
    .command("issue")
    .description(
      "Issue a grant for another environment; its link secret is printed once (give it to `switchyard link add` there) and only its hash is stored",
    )
    .requiredOption("--for <name>", "the environment it is for, as you call it (e.g. linux-box)")
    .requiredOption(
      "--projects <projects>",
      'the projects it may use here: ids or folders, comma-separated, or "*" for every project',
      parseProjects,
    )
    .requiredOption(
      "--verbs <verbs>",
      `what it may do, comma-separated: ${GRANT_VERBS.join(", ")} (none implies another)`,
      parseVerbs,
    )
    .option(
      "--max-runtime-mode <mode>",
      `the broadest runtime mode work it starts may have: ${RUNTIME_MODES.join(", ")} (default ${DEFAULT_MAX_RUNTIME_MODE})`,
      parseRuntimeMode,
    )
    .option(
      "--profiles <names>",
      "the profiles (this machine's: `switchyard profiles list`) work it starts may name, comma-separated; they run as defined here, never as the other machine defines them (default none)",
      (value: string) =>
        value
          .split(",")
          .map((name) => name.trim())
          .filter((name) => name.length > 0),
    )
    .option(
      "--ttl <duration>",
      "lifetime: a number and a unit s, m, h, d or w, at most 365d (default 30d)",
      parseDuration,
    )
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(async (options: IssueOptions) => {
      await withHost(options, async (host) => {
        let projects: ProjectScope = "*";
        if (options.projects !== "*") {
          const ids: string[] = [];
          for (const idOrPath of options.projects) ids.push(await projectIdOf(host, idOrPath));
          projects = ids;
        }
        const issued = host.container.resolve(ReachGrants).issue({
          for: options.for,
          projects,
          verbs: options.verbs,
          maxRuntimeMode: options.maxRuntimeMode ?? DEFAULT_MAX_RUNTIME_MODE,
          ...(options.profiles !== undefined ? { profiles: options.profiles } : {}),
          ttlMs: options.ttl ?? DEFAULT_TTL_MS,
        });
        if (options.json) {
          printJson({ ...issued.grant, secret: issued.secret });
          return;
        }
        process.stdout.write(`${issued.secret}\n`);
        process.stderr.write(
          [
            `Grant ${issued.grant.id} for ${issued.grant.for} expires ${issued.grant.expiresAt}. The secret above is shown only now; on ${issued.grant.for}, store it with:`,
            `  switchyard link add <name> <this server's URL> --secret -   (and paste it on stdin)`,
            `  verbs: ${issued.grant.verbs.join(", ")}`,
            `  projects: ${issued.grant.projects === "*" ? "every project" : issued.grant.projects.join(", ")}`,
            `  ceiling: runtime ${issued.grant.maxRuntimeMode}${options.maxRuntimeMode === undefined ? " (--max-runtime-mode allows more)" : ""}`,
            `  profiles: ${issued.grant.profiles.length === 0 ? "none (--profiles names some)" : issued.grant.profiles.join(", ")}`,
            "",
          ].join("\n"),
        );
      });
    });
  grant
    .command("list")
    .description(
      "List grants (never their secrets): who for, verbs, projects, ceiling, profiles, and whether they are active, expired or revoked",
    )
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(async (options: { home?: string; json?: boolean }) => {
      await withHost(options, async (host) => {
        const now = Date.now();
        const grants = (await host.container.resolve(ReachGrants).list()).map((g) => ({
          ...g,
          status: statusOf(g, now),
        }));
        if (options.json) printJson(grants);
        else if (grants.length === 0)
          process.stdout.write(
            "No grants yet. Issue one with: switchyard grant issue --for <name> --projects <ids|*> --verbs <verbs>\n",
          );
        else
          printTable(
            ["ID", "FOR", "VERBS", "PROJECTS", "CEILING", "PROFILES", "STATUS", "EXPIRES", "LAST USED"],
            grants.map((g) => [
              g.id,
              g.for,
              g.verbs.join(","),
              g.projects === "*" ? "*" : g.projects.join(","),
              g.maxRuntimeMode,
              g.profiles.join(","),
              style(g.status, STATUS_STYLE[g.status]),
              g.expiresAt,
              g.lastUsedAt ?? "",
            ]),
          );
      });
    });
  grant
    .command("revoke <id>")
    .description(
      "Revoke a grant by id: the next call under it is refused, and the scheduled tasks that run under it are paused",
    )
    .option("--home <dir>", "Switchyard home")
    .action(async (id: string, options: { home?: string }) => {
      await withHost(options, async (host) => {
        const grants = host.container.resolve(ReachGrants);
        if (await grants.revoke(id)) process.stdout.write(`Revoked ${id}\n`);
        else process.stdout.write(`${id} was already revoked (${(await grants.get(id))!.revokedAt}).\n`);
        const paused = await host.container.resolve(ScheduleStanding).pauseTasksOf({ kind: "grant", grantId: id });
        if (paused > 0)
          process.stdout.write(
            `Paused ${paused} scheduled task${paused === 1 ? "" : "s"} that ran under it (an agent in a thread the other machine started made them); \`switchyard schedules resume <id>\` resumes one under the home's owner.\n`,
          );
      });
    });
}
