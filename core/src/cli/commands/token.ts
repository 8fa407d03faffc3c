import type { Command } from "commander";
import { InvalidArgumentError } from "commander";
import { McpSessionRegistry, type CredentialCapability, type CredentialSummary } from "../../services/credentials/mcp-session-registry.js";
import { parseDuration } from "../duration.js";
import { withHost } from "../open-host.js";
import { CliError, EXIT, printJson, printTable, style } from "../output.js";

/** The scopes `token issue --scope` takes; operate includes read. */
const SCOPES = ["orchestration:read", "orchestration:operate"] as const satisfies readonly CredentialCapability[];
type Scope = (typeof SCOPES)[number];

const DEFAULT_TTL_MS = 30 * 86_400_000;

function parseScope(value: string): Scope {
  if ((SCOPES as readonly string[]).includes(value)) return value as Scope;
  throw new InvalidArgumentError(`"${value}" is not a scope; use orchestration:read or orchestration:operate.`);
}

/** The scope a token was issued with, named as `token issue --scope` names it. */
function scopeOf(token: CredentialSummary): Scope {
  return token.capabilities.includes("orchestration:operate") ? "orchestration:operate" : "orchestration:read";
}

type TokenStatus = "active" | "expired" | "revoked";

function statusOf(token: CredentialSummary, nowMs: number): TokenStatus {
  if (token.revokedAt !== null) return "revoked";
  return Date.parse(token.expiresAt) <= nowMs ? "expired" : "active";
}

const STATUS_STYLE = { active: "green", expired: "yellow", revoked: "dim" } as const;

export function registerToken(program: Command): void {
  const token = program.command("token").description("Bearer tokens for outside MCP clients (CLI, scripts, other machines)");
  token
    .command("issue")
    .description("Issue a token; it is printed once and only its hash is stored")
    .option("--ttl <duration>", "lifetime: a number and a unit s, m, h, d or w, at most 365d (default 30d)", parseDuration)
    .option("--scope <scope>", "orchestration:read or orchestration:operate (default operate)", parseScope)
    .option("--label <label>", "a name to recognise it in `token list`")
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(async (options: { ttl?: number; scope?: Scope; label?: string; home?: string; json?: boolean }) => {
      const scope = options.scope ?? "orchestration:operate";
      await withHost(options, (host) => {
        const issued = host.container.resolve(McpSessionRegistry).issueClientToken({ ttlMs: options.ttl ?? DEFAULT_TTL_MS, capabilities: [scope], label: options.label ?? null });
        if (options.json) {
          printJson({ ...issued, scope });
          return;
        }
        process.stdout.write(`${issued.token}\n`);
        process.stderr.write(`Token ${issued.id} (${scope}) expires ${issued.expiresAt}. It is shown only now; store it safely.\n`);
      });
    });
  token
    .command("list")
    .description("List client tokens (never the tokens themselves), with their scope and whether they are active, expired or revoked")
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(async (options: { home?: string; json?: boolean }) => {
      await withHost(options, (host) => {
        const now = Date.now();
        const tokens = host.container.resolve(McpSessionRegistry).list().map((t) => ({ ...t, scope: scopeOf(t), status: statusOf(t, now) }));
        if (options.json) printJson(tokens);
        else if (tokens.length === 0) process.stdout.write("No client tokens yet. Issue one with: switchyard token issue\n");
        else printTable(["ID", "LABEL", "SCOPE", "STATUS", "EXPIRES", "REVOKED"], tokens.map((t) => [t.id, t.label ?? "", t.scope, style(t.status, STATUS_STYLE[t.status]), t.expiresAt, t.revokedAt ?? ""]));
      });
    });
  token
    .command("revoke <id>")
    .description("Revoke a token by id")
    .option("--home <dir>", "Switchyard home")
    .action(async (id: string, options: { home?: string }) => {
      await withHost(options, (host) => {
        const registry = host.container.resolve(McpSessionRegistry);
        if (registry.revoke(id)) {
          process.stdout.write(`Revoked ${id}\n`);
          return;
        }
        const known = registry.list().find((t) => t.id === id);
        if (known === undefined) throw new CliError(`No client token has id ${id}. Run \`switchyard token list\` to see them.`, EXIT.notFound);
        process.stdout.write(`${id} was already revoked (${known.revokedAt}).\n`);
      });
    });
}
