import {
  ACP_REGISTRY_URL_ENV,
  DEFAULT_REGISTRY_URL,
  RegistryCatalog,
  acpRegistryCacheDir,
  resolveRegistryUrl,
  createProgressBar,
  isRegistryError,
  type AgentSummary,
  type IndexInfo,
  type InstalledAgent,
  type RegistryErrorReason,
} from "@switchyard/registry-cache";
import {
  COMMAND_EXIT_CODES,
  defineCommandGroup,
  type CommandContext,
  type CommandInvocation,
  type CommandOption,
  type ConfiguredInstance,
} from "@switchyard/sdk";

/**
 * `switchyard registry search|show|install|list|uninstall`: the operator's side of this plugin.
 * Agents go into the checksummed cache that acp-registry instances launch from; the plugin
 * contributes the commands, the host parses them.
 */

/** The driver whose instances name registry agents in `options.agentId`. */
const REGISTRY_DRIVER = "acp-registry";

/** Failures that mean the user's input was wrong (exit 2); `not_found` exits 3; every other reason is a failed operation (exit 1). */
const BAD_INPUT_REASONS: ReadonlySet<RegistryErrorReason> = new Set([
  "url_not_allowed",
  "invalid_agent_id",
  "invalid_command_override",
]);

function exitCodeForReason(reason: RegistryErrorReason): number {
  if (reason === "not_found") return COMMAND_EXIT_CODES.notFound;
  return BAD_INPUT_REASONS.has(reason) ? COMMAND_EXIT_CODES.usage : COMMAND_EXIT_CODES.failed;
}

const COMMON_OPTIONS: readonly CommandOption[] = [
  {
    name: "registry-url",
    valueName: "url",
    description: `registry index URL (default: $${ACP_REGISTRY_URL_ENV}, else ${DEFAULT_REGISTRY_URL})`,
  },
  { name: "json", description: "print JSON" },
];

function stringOption(invocation: CommandInvocation, name: string): string | undefined {
  const value = invocation.options[name];
  return typeof value === "string" ? value : undefined;
}

function openCatalog(invocation: CommandInvocation, context: CommandContext): RegistryCatalog {
  return new RegistryCatalog({
    cacheDir: acpRegistryCacheDir(context.paths.home),
    registryUrl: resolveRegistryUrl(stringOption(invocation, "registry-url")),
    logger: {
      warn: (message, fields) => context.output.warn(`${message}${fields ? ` ${JSON.stringify(fields)}` : ""}`),
    },
  });
}

/** Provider instances in the config that name `agentId` (any state: a disabled one would still launch it once enabled). */
function instancesUsing(instances: readonly ConfiguredInstance[], agentId: string): string[] {
  return instances
    .filter((instance) => instance.driver === REGISTRY_DRIVER && instance.options["agentId"] === agentId)
    .map((instance) => instance.id);
}

/**
 * Runs a registry command: a `RegistryError` becomes `error: <reason>: <message>` (and, with
 * `--json`, `{"error": {reason, message, details}}` on stdout) with exit code 2 for bad input,
 * 3 for an agent that does not exist, 1 for a failed operation.
 */
async function handled(
  invocation: CommandInvocation,
  context: CommandContext,
  work: () => Promise<number | void>,
): Promise<number | void> {
  try {
    return await work();
  } catch (error) {
    if (!isRegistryError(error)) throw error;
    if (invocation.options.json === true)
      context.output.json({ error: { reason: error.reason, message: error.message, details: error.details } });
    context.output.error(`${error.reason}: ${error.message}`);
    return exitCodeForReason(error.reason);
  }
}

function warnIfStale(index: IndexInfo, context: CommandContext): void {
  if (!index.stale) return;
  context.output.warn(
    `the registry at ${index.url} could not be reached (${index.refreshError ?? "unknown error"}); using the copy cached at ${index.fetchedAt}.`,
  );
}

function distributionLabel(agent: AgentSummary): string {
  if (agent.available) return agent.distribution ?? "";
  return agent.unavailableReason === "missing_runner"
    ? `${agent.declaredDistributions.join("/")} (runner missing)`
    : "none for this platform";
}

function shortHash(sha256: string | undefined): string {
  return sha256 === undefined ? "" : `${sha256.slice(0, 12)}…`;
}

/** The `registry` command group. */
export const registryCommands = defineCommandGroup({
  name: "registry",
  description:
    "Find and install ACP Registry agents into the checksummed cache that acp-registry provider instances launch",
  commands: [
    {
      name: "search",
      description:
        "Search the registry (fetches its index over the network; agents that cannot run on this machine are hidden unless --all)",
      arguments: [{ name: "query", required: false, variadic: true, description: "words to look for" }],
      options: [
        { name: "limit", valueName: "n", description: "at most this many results (default 20)" },
        {
          name: "all",
          description: "also list agents that cannot run here (no build for this platform, npm/uv missing)",
        },
        { name: "refresh", description: "fetch the index again even if the cached copy is fresh" },
        ...COMMON_OPTIONS,
      ],
      run: (invocation, context) =>
        handled(invocation, context, async () => {
          const limitText = stringOption(invocation, "limit");
          const limit = limitText === undefined ? undefined : Number(limitText);
          if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > 512)) {
            context.output.error(`--limit: "${limitText}" is not a result count (1-512).`);
            return COMMAND_EXIT_CODES.usage;
          }
          const words = (invocation.args.query as readonly string[] | undefined) ?? [];
          const result = await openCatalog(invocation, context).search(words.join(" "), {
            ...(limit !== undefined ? { limit } : {}),
            includeUnavailable: invocation.options.all === true,
            refresh: invocation.options.refresh === true,
          });
          const { output } = context;
          if (invocation.options.json === true) {
            output.json(result);
            return;
          }
          warnIfStale(result.index, context);
          if (result.agents.length === 0) {
            output.write(
              `No agents match "${result.query}" in ${result.index.url}.${result.hiddenUnavailable > 0 ? ` ${result.hiddenUnavailable} that cannot run here are hidden (add --all).` : ""}\n`,
            );
            return;
          }
          output.table(
            ["ID", "NAME", "VERSION", "DISTRIBUTION", "INTEGRITY", "INSTALLED", "DESCRIPTION"],
            result.agents.map((agent) => [
              agent.id,
              agent.name,
              agent.version,
              distributionLabel(agent),
              agent.integrity ?? "",
              agent.installed ? output.style("yes", "green") : "no",
              agent.description.length > 60 ? `${agent.description.slice(0, 59)}…` : agent.description,
            ]),
          );
          const more = result.total - result.agents.length;
          if (more > 0) output.write(`${more} more match${more === 1 ? "es" : ""}; raise --limit to see them.\n`);
          if (result.hiddenUnavailable > 0)
            output.write(`${result.hiddenUnavailable} hidden: they cannot run on this machine (add --all).\n`);
        }),
    },
    {
      name: "show",
      description:
        "Show one agent: distributions, readiness, installed versions (fetches the registry index over the network)",
      arguments: [{ name: "agentId" }],
      options: COMMON_OPTIONS,
      run: (invocation, context) =>
        handled(invocation, context, async () => {
          const details = await openCatalog(invocation, context).show(invocation.args.agentId as string);
          const { output } = context;
          if (invocation.options.json === true) {
            output.json(details);
            return;
          }
          warnIfStale(details.index, context);
          const { agent, summary, readiness, installed } = details;
          const lines: [string, string][] = [
            ["id", agent.id],
            ["name", agent.name],
            ["version", agent.version],
            ["description", agent.description],
            ...(agent.website ? ([["website", agent.website]] as [string, string][]) : []),
            ...(agent.repository ? ([["repository", agent.repository]] as [string, string][]) : []),
            ...(agent.license ? ([["license", agent.license]] as [string, string][]) : []),
            ["distributions", summary.declaredDistributions.join(", ") || "none for this platform"],
            ["would use", summary.distribution ?? "nothing (cannot run here)"],
            ["integrity", summary.integrity ?? ""],
            ["state", `${readiness.state}: ${readiness.message}`],
            ["index", `${details.index.url} (${details.index.source}${details.index.stale ? ", stale" : ""})`],
          ];
          const width = Math.max(...lines.map(([key]) => key.length));
          for (const [key, value] of lines) output.write(`${output.style(key.padEnd(width), "bold")}  ${value}\n`);
          if (installed.length > 0) {
            output.write("\n");
            output.table(
              ["INSTALLED", "DISTRIBUTION", "INTEGRITY", "SHA256", "LOCATION"],
              installed.map((install) => [
                install.version,
                install.distribution,
                install.integrity,
                shortHash(install.sha256),
                install.location,
              ]),
            );
          }
        }),
    },
    {
      name: "install",
      description:
        "Install an agent (binary archive with checksum, or pinned npx/uvx package) into the cache; downloads over the network",
      arguments: [{ name: "agentId" }],
      options: COMMON_OPTIONS,
      run: (invocation, context) =>
        handled(invocation, context, async () => {
          const { output } = context;
          const json = invocation.options.json === true;
          // The bar redraws one line in place: only for a person watching a terminal.
          const showBar = !json && output.stderr.isTTY;
          const prepared = await openCatalog(invocation, context).prepare(
            invocation.args.agentId as string,
            showBar ? { onProgress: createProgressBar(output.stderr) } : {},
          );
          if (json) {
            output.json(prepared);
            return;
          }
          const what = `${prepared.agentId} ${prepared.version}`;
          const integrity =
            prepared.sha256 !== undefined ? `${prepared.integrity} ${prepared.sha256}` : prepared.integrity;
          output.write(
            prepared.alreadyInstalled
              ? `${what} is already installed (${prepared.distribution}, ${integrity}).\n`
              : `${output.style("Installed", "green")} ${what} (${prepared.distribution}, ${integrity}) in ${prepared.location}\n`,
          );
          output.write(
            `Use it in a provider instance: { "driver": "${REGISTRY_DRIVER}", "options": { "agentId": "${prepared.agentId}" } }\n`,
          );
        }),
    },
    {
      name: "list",
      description: "List installed agents (from the cache's receipts; no network)",
      options: COMMON_OPTIONS,
      run: (invocation, context) =>
        handled(invocation, context, async () => {
          const { output } = context;
          const installed = await openCatalog(invocation, context).list();
          // Listing works even with a broken config; only the USED BY column needs it.
          let instances: readonly ConfiguredInstance[] = [];
          try {
            instances = context.instances();
          } catch (error) {
            output.warn(`cannot tell which instances use these agents: ${(error as Error).message}`);
          }
          const usedBy = (install: InstalledAgent) => instancesUsing(instances, install.agentId);
          if (invocation.options.json === true) {
            output.json(installed.map((install) => ({ ...install, usedBy: usedBy(install) })));
            return;
          }
          if (installed.length === 0) {
            output.write(
              `No registry agents are installed in ${acpRegistryCacheDir(context.paths.home)}. Find one with \`switchyard registry search\`.\n`,
            );
            return;
          }
          output.table(
            ["ID", "VERSION", "DISTRIBUTION", "INTEGRITY", "SHA256", "INSTALLED AT", "USED BY"],
            installed.map((install) => [
              install.agentId,
              install.version,
              install.distribution,
              install.integrity,
              shortHash(install.sha256),
              install.installedAt,
              usedBy(install).join(", "),
            ]),
          );
        }),
    },
    {
      name: "uninstall",
      description: "Remove an installed agent (refused while a configured provider instance uses it)",
      arguments: [{ name: "agentId" }],
      options: [
        {
          name: "agent-version",
          valueName: "version",
          description: "remove only this version (default: every installed version)",
        },
        ...COMMON_OPTIONS,
      ],
      run: (invocation, context) =>
        handled(invocation, context, async () => {
          const { output } = context;
          const agentId = invocation.args.agentId as string;
          const agentVersion = stringOption(invocation, "agent-version");
          const json = invocation.options.json === true;
          const users = instancesUsing(context.instances(), agentId);
          if (users.length > 0) {
            const message = `${agentId} is used by provider instance${users.length > 1 ? "s" : ""} ${users.join(", ")} in ${context.paths.configFile}. Remove ${users.length > 1 ? "them" : "it"} (or change options.agentId), then uninstall again.`;
            if (json) output.json({ error: { reason: "in_use", message, details: { agentId, instances: users } } });
            output.error(`in_use: ${message}`);
            return COMMAND_EXIT_CODES.failed;
          }
          const result = await openCatalog(invocation, context).uninstall(agentId, {
            isInUse: (id) => instancesUsing(context.instances(), id).length > 0,
            ...(agentVersion !== undefined ? { version: agentVersion } : {}),
          });
          if (result.removed.length === 0) {
            const message = `${agentId}${agentVersion ? ` ${agentVersion}` : ""} is not installed; nothing was removed. Run \`switchyard registry list\` to see installed agents.`;
            if (json)
              output.json({
                error: {
                  reason: "not_found",
                  message,
                  details: { agentId, ...(agentVersion ? { version: agentVersion } : {}) },
                },
              });
            output.error(`not_found: ${message}`);
            return COMMAND_EXIT_CODES.notFound;
          }
          if (json) {
            output.json(result);
            return;
          }
          output.write(
            `Removed ${result.removed.map((install) => `${install.agentId} ${install.version} (${install.distribution})`).join(", ")}\n`,
          );
        }),
    },
  ],
});
