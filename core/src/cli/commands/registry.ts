import type { Command } from "commander";
import { InvalidArgumentError } from "commander";
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
import { loadConfig } from "../../config/config-loader.js";
import { pathsFor, resolveHome, type SwitchyardPaths } from "../../config/paths.js";
import { CliError, EXIT, printJson, printTable, style } from "../output.js";

/** The driver whose instances name registry agents in `options.agentId`. */
const REGISTRY_DRIVER = "acp-registry";

/** Failures that mean the user's input was wrong (exit 2); `not_found` exits 3; every other reason is a failed operation (exit 1). */
const BAD_INPUT_REASONS: ReadonlySet<RegistryErrorReason> = new Set(["url_not_allowed", "invalid_agent_id", "invalid_command_override"]);

function exitCodeForReason(reason: RegistryErrorReason): number {
  if (reason === "not_found") return EXIT.notFound;
  return BAD_INPUT_REASONS.has(reason) ? EXIT.usage : EXIT.failed;
}

interface RegistryOptions {
  readonly registryUrl?: string;
  readonly home?: string;
  readonly json?: boolean;
}

function openCatalog(options: RegistryOptions): { catalog: RegistryCatalog; paths: SwitchyardPaths } {
  const paths = pathsFor(resolveHome(options.home));
  const catalog = new RegistryCatalog({
    cacheDir: acpRegistryCacheDir(paths.home),
    registryUrl: resolveRegistryUrl(options.registryUrl),
    logger: { warn: (message, fields) => process.stderr.write(`${style("warning:", "yellow", process.stderr)} ${message}${fields ? ` ${JSON.stringify(fields)}` : ""}\n`) },
  });
  return { catalog, paths };
}

/** Provider instances in the config that name `agentId` (any state: a disabled one would still launch it once enabled). */
function instancesUsing(paths: SwitchyardPaths, agentId: string): string[] {
  return loadConfig(paths.configFile)
    .providers.filter((provider) => provider.driver === REGISTRY_DRIVER && provider.options["agentId"] === agentId)
    .map((provider) => provider.id);
}

/**
 * Runs a registry command: a `RegistryError` becomes `error: <reason>: <message>` (and, with
 * `--json`, `{"error": {reason, message, details}}` on stdout) with exit code 2 for bad input,
 * 3 for an agent that does not exist, 1 for a failed operation.
 */
async function handled(options: RegistryOptions, work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (error) {
    if (!isRegistryError(error)) throw error;
    if (options.json) printJson({ error: { reason: error.reason, message: error.message, details: error.details } });
    throw new CliError(`${error.reason}: ${error.message}`, exitCodeForReason(error.reason));
  }
}

function warnIfStale(index: IndexInfo): void {
  if (!index.stale) return;
  process.stderr.write(
    `${style("warning:", "yellow", process.stderr)} the registry at ${index.url} could not be reached (${index.refreshError ?? "unknown error"}); using the copy cached at ${index.fetchedAt}.\n`,
  );
}

function distributionLabel(agent: AgentSummary): string {
  if (agent.available) return agent.distribution ?? "";
  return agent.unavailableReason === "missing_runner" ? `${agent.declaredDistributions.join("/")} (runner missing)` : "none for this platform";
}

function parseLimit(value: string): number {
  const limit = Number(value);
  if (!Number.isInteger(limit) || limit < 1 || limit > 512) throw new InvalidArgumentError(`"${value}" is not a result count (1-512).`);
  return limit;
}

function shortHash(sha256: string | undefined): string {
  return sha256 === undefined ? "" : `${sha256.slice(0, 12)}…`;
}

function withCommonOptions(command: Command): Command {
  return command
    .option("--registry-url <url>", `registry index URL (default: $${ACP_REGISTRY_URL_ENV}, else ${DEFAULT_REGISTRY_URL})`)
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON");
}

export function registerRegistry(program: Command): void {
  const registry = program
    .command("registry")
    .description("Find and install ACP Registry agents into the checksummed cache that acp-registry provider instances launch");

  withCommonOptions(
    registry
      .command("search [query...]")
      .description("Search the registry (fetches its index over the network; agents that cannot run on this machine are hidden unless --all)")
      .option("--limit <n>", "at most this many results (default 20)", parseLimit)
      .option("--all", "also list agents that cannot run here (no build for this platform, npm/uv missing)")
      .option("--refresh", "fetch the index again even if the cached copy is fresh"),
  ).action(async (words: string[], options: RegistryOptions & { limit?: number; all?: boolean; refresh?: boolean }) => {
    await handled(options, async () => {
      const { catalog } = openCatalog(options);
      const result = await catalog.search(words.join(" "), {
        ...(options.limit !== undefined ? { limit: options.limit } : {}),
        includeUnavailable: options.all === true,
        refresh: options.refresh === true,
      });
      if (options.json) {
        printJson(result);
        return;
      }
      warnIfStale(result.index);
      if (result.agents.length === 0) {
        process.stdout.write(`No agents match "${result.query}" in ${result.index.url}.${result.hiddenUnavailable > 0 ? ` ${result.hiddenUnavailable} that cannot run here are hidden (add --all).` : ""}\n`);
        return;
      }
      printTable(
        ["ID", "NAME", "VERSION", "DISTRIBUTION", "INTEGRITY", "INSTALLED", "DESCRIPTION"],
        result.agents.map((agent) => [
          agent.id,
          agent.name,
          agent.version,
          distributionLabel(agent),
          agent.integrity ?? "",
          agent.installed ? style("yes", "green") : "no",
          agent.description.length > 60 ? `${agent.description.slice(0, 59)}…` : agent.description,
        ]),
      );
      const more = result.total - result.agents.length;
      if (more > 0) process.stdout.write(`${more} more match${more === 1 ? "es" : ""}; raise --limit to see them.\n`);
      if (result.hiddenUnavailable > 0) process.stdout.write(`${result.hiddenUnavailable} hidden: they cannot run on this machine (add --all).\n`);
    });
  });

  withCommonOptions(registry.command("show <agentId>").description("Show one agent: distributions, readiness, installed versions (fetches the registry index over the network)")).action(
    async (agentId: string, options: RegistryOptions) => {
      await handled(options, async () => {
        const { catalog } = openCatalog(options);
        const details = await catalog.show(agentId);
        if (options.json) {
          printJson(details);
          return;
        }
        warnIfStale(details.index);
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
        for (const [key, value] of lines) process.stdout.write(`${style(key.padEnd(width), "bold")}  ${value}\n`);
        if (installed.length > 0) {
          process.stdout.write("\n");
          printTable(
            ["INSTALLED", "DISTRIBUTION", "INTEGRITY", "SHA256", "LOCATION"],
            installed.map((install) => [install.version, install.distribution, install.integrity, shortHash(install.sha256), install.location]),
          );
        }
      });
    },
  );

  withCommonOptions(
    registry.command("install <agentId>").description("Install an agent (binary archive with checksum, or pinned npx/uvx package) into the cache; downloads over the network"),
  ).action(async (agentId: string, options: RegistryOptions) => {
    await handled(options, async () => {
      const { catalog } = openCatalog(options);
      // The bar redraws one line in place: only for a person watching a terminal.
      const showBar = options.json !== true && process.stderr.isTTY === true;
      const prepared = await catalog.prepare(agentId, showBar ? { onProgress: createProgressBar(process.stderr) } : {});
      if (options.json) {
        printJson(prepared);
        return;
      }
      const what = `${prepared.agentId} ${prepared.version}`;
      const integrity = prepared.sha256 !== undefined ? `${prepared.integrity} ${prepared.sha256}` : prepared.integrity;
      process.stdout.write(
        prepared.alreadyInstalled
          ? `${what} is already installed (${prepared.distribution}, ${integrity}).\n`
          : `${style("Installed", "green")} ${what} (${prepared.distribution}, ${integrity}) in ${prepared.location}\n`,
      );
      process.stdout.write(`Use it in a provider instance: { "driver": "${REGISTRY_DRIVER}", "options": { "agentId": "${prepared.agentId}" } }\n`);
    });
  });

  withCommonOptions(registry.command("list").description("List installed agents (from the cache's receipts; no network)")).action(async (options: RegistryOptions) => {
    await handled(options, async () => {
      const { catalog, paths } = openCatalog(options);
      const installed = await catalog.list();
      // Listing works even with a broken config; only the USED BY column needs it.
      let providers: { id: string; driver: string; options: Record<string, unknown> }[] = [];
      try {
        providers = loadConfig(paths.configFile).providers;
      } catch (error) {
        process.stderr.write(`${style("warning:", "yellow", process.stderr)} cannot tell which instances use these agents: ${(error as Error).message}\n`);
      }
      const usedBy = (install: InstalledAgent) =>
        providers.filter((provider) => provider.driver === REGISTRY_DRIVER && provider.options["agentId"] === install.agentId).map((provider) => provider.id);
      if (options.json) {
        printJson(installed.map((install) => ({ ...install, usedBy: usedBy(install) })));
        return;
      }
      if (installed.length === 0) {
        process.stdout.write(`No registry agents are installed in ${acpRegistryCacheDir(paths.home)}. Find one with \`switchyard registry search\`.\n`);
        return;
      }
      printTable(
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
    });
  });

  withCommonOptions(
    registry
      .command("uninstall <agentId>")
      .description("Remove an installed agent (refused while a configured provider instance uses it)")
      .option("--agent-version <version>", "remove only this version (default: every installed version)"),
  ).action(async (agentId: string, options: RegistryOptions & { agentVersion?: string }) => {
    await handled(options, async () => {
      const { catalog, paths } = openCatalog(options);
      const users = instancesUsing(paths, agentId);
      if (users.length > 0) {
        const message = `${agentId} is used by provider instance${users.length > 1 ? "s" : ""} ${users.join(", ")} in ${paths.configFile}. Remove ${users.length > 1 ? "them" : "it"} (or change options.agentId), then uninstall again.`;
        if (options.json) printJson({ error: { reason: "in_use", message, details: { agentId, instances: users } } });
        throw new CliError(`in_use: ${message}`, EXIT.failed);
      }
      const result = await catalog.uninstall(agentId, {
        isInUse: (id) => instancesUsing(paths, id).length > 0,
        ...(options.agentVersion !== undefined ? { version: options.agentVersion } : {}),
      });
      if (result.removed.length === 0) {
        const message = `${agentId}${options.agentVersion ? ` ${options.agentVersion}` : ""} is not installed; nothing was removed. Run \`switchyard registry list\` to see installed agents.`;
        if (options.json) printJson({ error: { reason: "not_found", message, details: { agentId, ...(options.agentVersion ? { version: options.agentVersion } : {}) } } });
        throw new CliError(`not_found: ${message}`, EXIT.notFound);
      }
      if (options.json) {
        printJson(result);
        return;
      }
      process.stdout.write(`Removed ${result.removed.map((install) => `${install.agentId} ${install.version} (${install.distribution})`).join(", ")}\n`);
    });
  });
}
