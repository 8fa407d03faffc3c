import type { Command } from "commander";
import { InvalidArgumentError } from "commander";
import { McpSessionRegistry, type CredentialCapability } from "../../services/credentials/mcp-session-registry.js";
import { withHost } from "../open-host.js";
import { CliError, EXIT, printJson, printTable } from "../output.js";
import { parseDuration } from "../parse.js";

function parseScope(value: string): CredentialCapability {
  if (value === "orchestration:read" || value === "orchestration:operate") return value;
  throw new InvalidArgumentError(`"${value}" is not a scope; use orchestration:read or orchestration:operate.`);
}

export function registerToken(program: Command): void {
  const token = program.command("token").description("Bearer tokens for outside MCP clients (CLI, scripts, other machines)");
  token
    .command("issue")
    .description("Issue a token; it is printed once and only its hash is stored")
    .option("--ttl <duration>", "lifetime, e.g. 1h, 7d (default 30d)", parseDuration)
    .option("--scope <scope>", "orchestration:read or orchestration:operate (default operate)", parseScope)
    .option("--label <label>", "a name to recognise it in `token list`")
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(async (options: { ttl?: number; scope?: CredentialCapability; label?: string; home?: string; json?: boolean }) => {
      await withHost(options, (host) => {
        const issued = host.container.resolve(McpSessionRegistry).issueClientToken({
          ttlMs: options.ttl ?? 30 * 86_400_000,
          capabilities: [options.scope ?? "orchestration:operate"],
          label: options.label ?? null,
        });
        if (options.json) printJson({ ...issued, scope: options.scope ?? "orchestration:operate" });
        else process.stdout.write(`${issued.token}\n`);
        if (!options.json) process.stderr.write(`Token ${issued.id} expires ${issued.expiresAt}. It is shown only now; store it safely.\n`);
      });
    });
  token
    .command("list")
    .description("List client tokens (never the tokens themselves)")
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(async (options: { home?: string; json?: boolean }) => {
      await withHost(options, (host) => {
        const tokens = host.container.resolve(McpSessionRegistry).list();
        if (options.json) printJson(tokens);
        else printTable(["ID", "LABEL", "SCOPE", "EXPIRES", "REVOKED"], tokens.map((t) => [t.id, t.label ?? "", t.capabilities.join(","), t.expiresAt, t.revokedAt ?? ""]));
      });
    });
  token
    .command("revoke <id>")
    .description("Revoke a token by id")
    .option("--home <dir>", "Switchyard home")
    .action(async (id: string, options: { home?: string }) => {
      await withHost(options, (host) => {
        if (!host.container.resolve(McpSessionRegistry).revoke(id)) throw new CliError(`No active token with id ${id}. Run \`switchyard token list\` to see them.`, EXIT.usage);
        process.stdout.write(`Revoked ${id}\n`);
      });
    });
}
