import { mkdir, rmdir } from "node:fs/promises";
import { join } from "node:path";
import { installBinary } from "./binary-installer.js";
import { CacheLayout } from "./cache-layout.js";
import {
  DEFAULT_CATALOG_LIMITS,
  DEFAULT_REGISTRY_URL,
  type AgentDetails,
  type AgentLaunchSpec,
  type AgentReadiness,
  type AgentSummary,
  type IndexInfo,
  type InstalledAgent,
  type PrepareOptions,
  type PreparedAgent,
  type RegistryCatalogLimits,
  type RegistryCatalogOptions,
  type ResolveLaunchOptions,
  type SearchOptions,
  type SearchResult,
  type UninstallOptions,
  type UninstallResult,
} from "./catalog-types.js";
import {
  declaredKinds,
  selectDistribution,
  type DistributionChoice,
  type RunnerName,
  type SelectedDistribution,
} from "./distribution.js";
import { RegistryError, isRegistryError } from "./errors.js";
import type { FetchLike } from "./fetch-like.js";
import { removeForcefully, removeTree } from "./fs-atomic.js";
import { RegistryIndexFetcher, type LoadedRegistryIndex } from "./index-fetcher.js";
import { InstallLock } from "./install-lock.js";
import { silentLogger, type RegistryLogger } from "./logger.js";
import {
  binaryFound,
  collectInstalls,
  findInstall,
  packageFound,
  readdirOrEmpty,
  type FoundInstall,
} from "./installed-agents.js";
import { installNpmPackage, installUvPackage, uninstallPackage } from "./package-installer.js";
import { detectPlatform, type PlatformKey } from "./platform.js";
import type { Integrity, PackageReceipt } from "./receipts.js";
import { isValidAgentId, type RegistryAgent } from "./registry-schema.js";
import { findExecutable, isExecutableFile, type ProcessEnv } from "./runner-lookup.js";
import { rankAgents } from "./search.js";

/** A stale (cached) index is retried sooner than a fresh one is refreshed. */
const STALE_INDEX_RETRY_MS = 30_000;

/** What {@link RegistryCatalog.sweepAbandoned} removed: the agents whose killed installs it tidied, and how many temp directories. */
export interface AbandonedSweep {
  readonly agents: readonly string[];
  readonly tempDirs: number;
}
const DEFAULT_SEARCH_LIMIT = 20;

/**
 * The ACP Registry catalog: one service behind `switchyard registry search|show|install|list|
 * uninstall`, provider status views and agent session start.
 *
 * - `search`, `show`, `inspect`, `list` and `resolveLaunch` never start a process (runner
 *   availability is a PATH lookup).
 * - `prepare` installs: a checksummed binary archive, or a pinned npm/uv package. Concurrent
 *   `prepare` calls for one agent (in this process or others sharing the cache) produce one
 *   install; the others wait and then report it as already installed.
 * - Failures are {@link RegistryError}s with a stable `reason`.
 */
export class RegistryCatalog {
  readonly cacheDir: string;
  readonly registryUrl: string;
  readonly platform: PlatformKey | null;
  readonly limits: RegistryCatalogLimits;

  private readonly layout: CacheLayout;
  private readonly fetcher: RegistryIndexFetcher;
  private readonly logger: RegistryLogger;
  private readonly env: ProcessEnv;
  private readonly fetchImpl: FetchLike;
  private loaded: { value: LoadedRegistryIndex; expiresAt: number } | undefined;
  private loading: Promise<LoadedRegistryIndex> | undefined;
  private readonly preparedAt = new Map<string, number>();
  private sweeping: Promise<AbandonedSweep> | undefined;

  /** @throws RegistryError `url_not_allowed` when `registryUrl` is not acceptable. */
  constructor(private readonly options: RegistryCatalogOptions) {
    this.cacheDir = options.cacheDir;
    this.registryUrl = options.registryUrl ?? DEFAULT_REGISTRY_URL;
    this.platform = options.platform === undefined ? detectPlatform() : options.platform;
    this.limits = { ...DEFAULT_CATALOG_LIMITS, ...options.limits };
    this.layout = new CacheLayout(options.cacheDir);
    this.logger = options.logger ?? silentLogger;
    this.env = options.env ?? process.env;
    this.fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
    this.fetcher = new RegistryIndexFetcher({
      url: this.registryUrl,
      layout: this.layout,
      fetch: this.fetchImpl,
      logger: this.logger,
      maxBytes: this.limits.maxIndexBytes,
      timeoutMs: this.limits.indexTimeoutMs,
    });
  }

  /**
   * The index: from memory while fresh, else from the network, else (network failure only)
   * the cached copy, reported as stale.
   */
  async loadIndex(options: { refresh?: boolean; offline?: boolean } = {}): Promise<LoadedRegistryIndex> {
    if (options.offline === true) return this.loadOffline();
    if (options.refresh !== true && this.loaded !== undefined && Date.now() < this.loaded.expiresAt)
      return this.loaded.value;
    this.loading ??= this.fetcher.load().finally(() => {
      this.loading = undefined;
    });
    const value = await this.loading;
    const lifetime = value.stale ? Math.min(STALE_INDEX_RETRY_MS, this.limits.indexTtlMs) : this.limits.indexTtlMs;
    this.loaded = { value, expiresAt: Date.now() + lifetime };
    return value;
  }

  /**
   * The index without the network: the copy in memory (even when due for a refresh), else the
   * last good copy on disk. @throws RegistryError `index_unavailable` when there is neither.
   */
  private async loadOffline(): Promise<LoadedRegistryIndex> {
    if (this.loaded !== undefined) return this.loaded.value;
    const cached = await this.fetcher.readCachedCopy();
    if (cached !== null) return cached;
    throw new RegistryError(
      "index_unavailable",
      `No registry index from ${this.registryUrl} is cached yet. Run \`switchyard registry search\` (it fetches the index over the network), or install the agent with \`switchyard registry install\`.`,
      { details: { url: this.registryUrl } },
    );
  }

  /** Ranked agents matching `query`; agents that cannot run here are hidden unless asked for. */
  async search(query: string, options: SearchOptions = {}): Promise<SearchResult> {
    const loaded = await this.loadIndex({ refresh: options.refresh === true });
    const limit = Math.max(0, options.limit ?? DEFAULT_SEARCH_LIMIT);
    const probe = this.memoizedRunnerProbe();
    const matches: { agent: RegistryAgent; choice: DistributionChoice }[] = [];
    let hiddenUnavailable = 0;
    for (const agent of rankAgents(loaded.index.agents, query)) {
      const choice = await selectDistribution(agent, this.platform, probe);
      if (!choice.ok && options.includeUnavailable !== true) {
        hiddenUnavailable += 1;
        continue;
      }
      matches.push({ agent, choice });
    }
    const agents: AgentSummary[] = [];
    for (const { agent, choice } of matches.slice(0, limit)) agents.push(await this.summarize(agent, choice));
    return { query, agents, total: matches.length, hiddenUnavailable, index: indexInfo(loaded) };
  }

  /** Everything known about one agent. @throws RegistryError `not_found`, index errors. */
  async show(agentId: string): Promise<AgentDetails> {
    const { agent, loaded } = await this.requireAgent(agentId);
    const choice = await selectDistribution(agent, this.platform, this.memoizedRunnerProbe());
    const installed = (await this.list()).filter((install) => install.agentId === agent.id);
    return {
      agent,
      summary: await this.summarize(agent, choice),
      readiness: await this.readinessFor(agent, choice, loaded),
      installed,
      index: indexInfo(loaded),
    };
  }

  /**
   * Readiness without side effects: never installs, never spawns; with `offline`, never uses
   * the network either (the cached index only). Index failures become `unconfigured` (with the
   * typed `reason`) unless the agent is installed, in which case its receipt is enough to be
   * `ready`.
   */
  async inspect(agentId: string, options: { offline?: boolean } = {}): Promise<AgentReadiness> {
    if (agentId.trim() === "")
      return {
        agentId,
        state: "unconfigured",
        message: "No ACP Registry agent id is configured. Set one, e.g. from `switchyard registry search`.",
      };
    if (!isValidAgentId(agentId))
      return { agentId, state: "not_found", message: `"${agentId}" is not a valid registry agent id.` };
    let loaded: LoadedRegistryIndex;
    try {
      loaded = await this.loadIndex({ offline: options.offline === true });
    } catch (error) {
      if (!isRegistryError(error)) throw error;
      const installed = await this.newestInstall(agentId);
      if (installed !== null) {
        return {
          agentId,
          state: "ready",
          message: `${agentId} ${installed.version} is installed; the registry index is unavailable (${error.message})`,
          version: installed.version,
          distribution: installed.launch.distribution,
          launch: installed.launch,
        };
      }
      return { agentId, state: "unconfigured", message: error.message, reason: error.reason };
    }
    const agent = loaded.index.agents.find((candidate) => candidate.id === agentId);
    if (agent === undefined) {
      return {
        agentId,
        state: "not_found",
        message: `${agentId} is not in the registry at ${loaded.url}. Search with \`switchyard registry search\`.`,
        index: indexInfo(loaded),
      };
    }
    const choice = await selectDistribution(agent, this.platform, this.memoizedRunnerProbe());
    return this.readinessFor(agent, choice, loaded);
  }

  /**
   * Installs the agent's distribution for this machine, or confirms it is installed.
   * @throws RegistryError `not_found`, `unsupported_platform`, `runner_unavailable`, download,
   *   checksum and archive reasons, `package_install_failed`, `lock_timeout`, `aborted`.
   */
  async prepare(agentId: string, options: PrepareOptions = {}): Promise<PreparedAgent> {
    const { agent } = await this.requireAgent(agentId);
    const selected = await this.requireSelection(agent);
    const { onProgress } = options;
    const ready = (found: FoundInstall, alreadyInstalled: boolean): PreparedAgent => {
      this.preparedAt.set(agent.id, Date.now());
      onProgress?.({ phase: "done", agentId: agent.id, alreadyInstalled });
      return {
        agentId: agent.id,
        version: agent.version,
        distribution: selected.kind,
        alreadyInstalled,
        integrity: found.integrity,
        ...(found.sha256 === undefined ? {} : { sha256: found.sha256 }),
        location: found.location,
        launch: found.launch,
      };
    };

    await this.sweepAbandoned();
    const existing = await findInstall(this.layout, agent, selected);
    if (existing !== null) return ready(existing, true);

    await mkdir(this.cacheDir, { recursive: true });
    const lock = await InstallLock.acquire(this.layout.lockFile(agent.id), {
      subject: agent.id,
      staleMs: this.limits.lockStaleMs,
      timeoutMs: this.limits.lockTimeoutMs,
      onWait: () => onProgress?.({ phase: "waiting_for_lock", agentId: agent.id }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    try {
      // Whoever held the lock before us may have installed it meanwhile.
      const installedMeanwhile = await findInstall(this.layout, agent, selected);
      if (installedMeanwhile !== null) return ready(installedMeanwhile, true);
      await this.removeOrphanedTempDirs(agent.id);
      return ready(await this.install(agent, selected, options), false);
    } finally {
      await lock.release();
    }
  }

  /** Installed agents, from their receipts (no index needed). */
  async list(): Promise<InstalledAgent[]> {
    await this.sweepAbandoned();
    return (await collectInstalls(this.layout)).map((record) => record.installed);
  }

  /**
   * Removes an agent's installs (every version, or `options.version`).
   * @throws RegistryError `in_use` while an instance uses it or right after `prepare`.
   */
  async uninstall(agentId: string, options: UninstallOptions = {}): Promise<UninstallResult> {
    this.requireValidId(agentId);
    const isInUse = options.isInUse ?? this.options.isInUse;
    if (isInUse !== undefined && (await isInUse(agentId))) {
      throw new RegistryError(
        "in_use",
        `${agentId} is in use by a running provider instance. Stop the sessions that use it, then uninstall again.`,
        {
          details: { agentId },
        },
      );
    }
    const preparedAt = this.preparedAt.get(agentId);
    if (preparedAt !== undefined && Date.now() - preparedAt < this.limits.postPrepareReservationMs) {
      throw new RegistryError(
        "in_use",
        `${agentId} was prepared moments ago and a session is probably starting with it. Retry in ${Math.ceil((this.limits.postPrepareReservationMs - (Date.now() - preparedAt)) / 1000)} s.`,
        { details: { agentId } },
      );
    }
    await this.sweepAbandoned();
    await mkdir(this.cacheDir, { recursive: true });
    const lock = await InstallLock.acquire(this.layout.lockFile(agentId), {
      subject: agentId,
      staleMs: this.limits.lockStaleMs,
      timeoutMs: this.limits.lockTimeoutMs,
    });
    try {
      const targets = (await collectInstalls(this.layout)).filter(
        ({ installed }) =>
          installed.agentId === agentId && (options.version === undefined || installed.version === options.version),
      );
      for (const record of targets)
        if (record.packageReceipt !== undefined) await this.removePackageInstall(record.packageReceipt);
      // Binary installs go by directory, which also clears a broken install (no receipt or
      // command) that the receipts above cannot see.
      // `version` is matched against directory names, never joined into a path as given.
      if (options.version === undefined) await removeTree(this.layout.agentDir(agentId));
      else if ((await readdirOrEmpty(this.layout.agentDir(agentId))).includes(options.version))
        await removeTree(join(this.layout.agentDir(agentId), options.version));
      // Shared parents (agents/, package-installs/) stay: other agents' installs, under their
      // own locks, may be about to write into them.
      await removeIfEmpty(this.layout.agentDir(agentId));
      return { agentId, removed: targets.map((record) => record.installed) };
    } finally {
      await lock.release();
    }
  }

  /**
   * The spawn spec for an installed agent, or for a local command override (which keeps the
   * registry-declared args and env). Never installs: call `prepare` first.
   * @throws RegistryError `not_prepared`, `not_found`, `invalid_command_override`, …
   */
  async resolveLaunch(agentId: string, options: ResolveLaunchOptions = {}): Promise<AgentLaunchSpec> {
    this.requireValidId(agentId);
    let agent: RegistryAgent;
    try {
      agent = (await this.requireAgent(agentId, { offline: options.offline === true })).agent;
    } catch (error) {
      // Session start must not depend on the CDN: an installed agent launches from its receipt.
      if (!isRegistryError(error) || error.reason === "not_found" || options.commandOverride !== undefined) throw error;
      const installed = await this.newestInstall(agentId);
      if (installed === null) throw error;
      this.logger.warn("registry index unavailable; launching from the install receipt", {
        agentId,
        version: installed.version,
        reason: error.reason,
      });
      return installed.launch;
    }
    if (options.commandOverride !== undefined) return this.overrideLaunch(agent, options.commandOverride);
    const selected = await this.requireSelection(agent);
    const found = await findInstall(this.layout, agent, selected);
    if (found === null) {
      throw new RegistryError(
        "not_prepared",
        `${agent.id} ${agent.version} is not installed. Run \`switchyard registry install ${agent.id}\` first.`,
        {
          details: { agentId: agent.id, version: agent.version, distribution: selected.kind },
        },
      );
    }
    return found.launch;
  }

  // ---------------------------------------------------------------------------------------

  private async install(
    agent: RegistryAgent,
    selected: SelectedDistribution,
    options: PrepareOptions,
  ): Promise<FoundInstall> {
    const common = {
      ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    };
    switch (selected.kind) {
      case "binary": {
        const install = await installBinary(agent, selected.platform, selected.target, {
          layout: this.layout,
          fetch: this.fetchImpl,
          limits: {
            maxArchiveBytes: this.limits.maxArchiveBytes,
            downloadTimeoutMs: this.limits.downloadTimeoutMs,
            maxExtractedBytes: this.limits.maxExtractedBytes,
            maxEntries: this.limits.maxArchiveEntries,
          },
          ...common,
        });
        return binaryFound(install);
      }
      case "npx":
      case "uvx": {
        const runner: RunnerName = selected.kind === "npx" ? "npm" : "uv";
        const context = { ...(await this.packageContext(runner)), ...common };
        const install =
          selected.kind === "npx"
            ? await installNpmPackage(agent, selected.distribution, selected.package, context)
            : await installUvPackage(agent, selected.distribution, selected.package, context);
        return packageFound(install);
      }
    }
  }

  private async packageContext(runner: RunnerName): Promise<Parameters<typeof installNpmPackage>[3]> {
    const runnerPath = await this.runnerPath(runner);
    if (runnerPath === null) throw this.runnerUnavailable([runner]);
    return {
      layout: this.layout,
      env: this.env,
      runnerPath,
      timeoutMs: this.limits.packageInstallTimeoutMs,
      ...(runner === "npm" && this.options.npmPrefix !== undefined ? { npmPrefix: this.options.npmPrefix } : {}),
    };
  }

  /** The most recently installed runnable version of an agent, for launching without an index. */
  private async newestInstall(agentId: string): Promise<(FoundInstall & { version: string }) | null> {
    const candidates = (await collectInstalls(this.layout)).filter(
      ({ installed }) =>
        installed.agentId === agentId && (installed.platform === undefined || installed.platform === this.platform),
    );
    candidates.sort((a, b) => b.installed.installedAt.localeCompare(a.installed.installedAt));
    for (const { installed, found } of candidates) {
      if (await isExecutableFile(found.launch.command)) return { ...found, version: installed.version };
    }
    return null;
  }

  private async removePackageInstall({ receipt, file }: { file: string; receipt: PackageReceipt }): Promise<void> {
    const runnerPath = await this.runnerPath(receipt.packageManager);
    if (runnerPath === null) {
      this.logger.warn("package manager missing; forgetting the install without removing its files", {
        agentId: receipt.agentId,
        packageManager: receipt.packageManager,
        location: receipt.location,
      });
    } else {
      await uninstallPackage(receipt, {
        layout: this.layout,
        env: this.env,
        runnerPath,
        timeoutMs: this.limits.packageInstallTimeoutMs,
      });
    }
    await removeForcefully(file);
  }

  private async overrideLaunch(agent: RegistryAgent, commandOverride: string): Promise<AgentLaunchSpec> {
    const command = await findExecutable(commandOverride, this.env);
    if (command === null) {
      throw new RegistryError(
        "invalid_command_override",
        `The command override "${commandOverride}" for ${agent.id} is not an executable file (or not on PATH). Fix the path or remove the override.`,
        {
          details: { agentId: agent.id, commandOverride },
        },
      );
    }
    // The declared args/env come from the distribution that would have been used, or, when
    // none is usable here (which is often why an override exists), the first one declared.
    const source =
      (this.platform === null ? undefined : agent.distribution.binary?.[this.platform]) ??
      agent.distribution.npx ??
      agent.distribution.uvx;
    const kind = declaredKinds(agent, this.platform)[0] ?? "binary";
    return {
      agentId: agent.id,
      version: agent.version,
      distribution: kind,
      command,
      args: [...(source?.args ?? [])],
      env: { ...(source?.env ?? {}) },
      commandOverridden: true,
    };
  }

  private async readinessFor(
    agent: RegistryAgent,
    choice: DistributionChoice,
    loaded: LoadedRegistryIndex,
  ): Promise<AgentReadiness> {
    const base = { agentId: agent.id, version: agent.version, index: indexInfo(loaded) };
    if (!choice.ok) {
      return choice.state === "unsupported"
        ? { ...base, state: "unsupported", message: choice.message }
        : { ...base, state: "missing_runner", message: choice.message, missingRunners: choice.runners };
    }
    const found = await findInstall(this.layout, agent, choice.selected);
    if (found === null) {
      return {
        ...base,
        state: "unprepared",
        distribution: choice.selected.kind,
        message: `${agent.id} ${agent.version} is not installed yet. Run \`switchyard registry install ${agent.id}\`.`,
      };
    }
    return {
      ...base,
      state: "ready",
      distribution: choice.selected.kind,
      message: `${agent.id} ${agent.version} is installed and ready.`,
      launch: found.launch,
    };
  }

  private async summarize(agent: RegistryAgent, choice: DistributionChoice): Promise<AgentSummary> {
    const found = choice.ok ? await findInstall(this.layout, agent, choice.selected) : null;
    let integrity: Integrity | null = null;
    if (found !== null) integrity = found.integrity;
    else if (choice.ok)
      integrity =
        choice.selected.kind === "binary"
          ? choice.selected.target.sha256 === undefined
            ? "recorded"
            : "sha256"
          : "package_version";
    return {
      id: agent.id,
      name: agent.name,
      version: agent.version,
      description: agent.description,
      ...(agent.license === undefined ? {} : { license: agent.license }),
      ...(agent.website === undefined ? {} : { website: agent.website }),
      ...(agent.repository === undefined ? {} : { repository: agent.repository }),
      ...(agent.authors === undefined ? {} : { authors: agent.authors }),
      distribution: choice.ok ? choice.selected.kind : null,
      declaredDistributions: declaredKinds(agent, this.platform),
      available: choice.ok,
      ...(choice.ok ? {} : { unavailableReason: choice.state }),
      integrity,
      installed: found !== null,
    };
  }

  private async requireAgent(
    agentId: string,
    options: { offline?: boolean } = {},
  ): Promise<{ agent: RegistryAgent; loaded: LoadedRegistryIndex }> {
    this.requireValidId(agentId);
    const loaded = await this.loadIndex({ offline: options.offline === true });
    const agent = loaded.index.agents.find((candidate) => candidate.id === agentId);
    if (agent === undefined) {
      const similar = rankAgents(loaded.index.agents, agentId.split(/[-._]/)[0] ?? agentId)
        .slice(0, 3)
        .map((candidate) => candidate.id);
      throw new RegistryError(
        "not_found",
        `${agentId} is not in the registry at ${loaded.url}.` +
          (similar.length > 0 ? ` Did you mean ${similar.join(", ")}?` : " Search with `switchyard registry search`."),
        { details: { agentId, similar } },
      );
    }
    return { agent, loaded };
  }

  private async requireSelection(agent: RegistryAgent): Promise<SelectedDistribution> {
    const choice = await selectDistribution(agent, this.platform, this.memoizedRunnerProbe());
    if (choice.ok) return choice.selected;
    if (choice.state === "missing_runner") throw this.runnerUnavailable(choice.runners, choice.message);
    throw new RegistryError(
      "unsupported_platform",
      `${choice.message} Use a local command override if you have a build.`,
      {
        details: { agentId: agent.id, platform: this.platform },
      },
    );
  }

  private runnerUnavailable(runners: readonly RunnerName[], message?: string): RegistryError {
    const commands = runners.map((runner) =>
      runner === "npm" ? (this.options.npmCommand ?? "npm") : (this.options.uvCommand ?? "uv"),
    );
    return new RegistryError(
      "runner_unavailable",
      message ?? `${commands.join(" / ")} is not installed or not on PATH. Install it and try again.`,
      {
        details: { runners, commands },
      },
    );
  }

  private requireValidId(agentId: string): void {
    if (!isValidAgentId(agentId)) {
      throw new RegistryError(
        "invalid_agent_id",
        `"${agentId}" is not a valid registry agent id (lower-case letters, digits, '.', '_' and '-').`,
        {
          details: { agentId },
        },
      );
    }
  }

  private async runnerPath(runner: RunnerName): Promise<string | null> {
    const command = runner === "npm" ? (this.options.npmCommand ?? "npm") : (this.options.uvCommand ?? "uv");
    return findExecutable(command, this.env);
  }

  private memoizedRunnerProbe(): (runner: RunnerName) => Promise<boolean> {
    const known = new Map<RunnerName, Promise<boolean>>();
    return (runner) => {
      let answer = known.get(runner);
      if (answer === undefined) {
        answer = this.runnerPath(runner).then((path) => path !== null);
        known.set(runner, answer);
      }
      return answer;
    };
  }

  // Temp directories of this agent can only belong to a crashed install: we hold its lock.
  private async removeOrphanedTempDirs(agentId: string): Promise<number> {
    const pattern = new RegExp(`^\\.tmp-${agentId.replace(/[.]/g, "\\.")}-[A-Za-z0-9]{6}$`);
    let removed = 0;
    for (const name of await readdirOrEmpty(this.cacheDir)) {
      if (!pattern.test(name)) continue;
      await removeForcefully(join(this.cacheDir, name));
      removed += 1;
    }
    return removed;
  }

  /**
   * Removes what installs killed mid-way left in the cache (kill -9, a power cut): their temp
   * directories and their locks. Per agent it takes the agent's install lock, which succeeds only
   * when no live process holds it (the holder's pid is gone, or the lock went stale), so a running
   * install on this machine, in this process or another, is never touched. Runs once per catalog,
   * before its first install, uninstall or listing; a server calls it at start.
   */
  sweepAbandoned(): Promise<AbandonedSweep> {
    this.sweeping ??= this.sweep().catch((error: unknown) => {
      // Tidying is best effort: the installs that follow clean up after themselves as before.
      this.logger.warn("could not tidy abandoned installs in the registry cache", {
        cacheDir: this.cacheDir,
        error: error instanceof Error ? error.message : String(error),
      });
      return { agents: [], tempDirs: 0 };
    });
    return this.sweeping;
  }

  private async sweep(): Promise<AbandonedSweep> {
    const names = await readdirOrEmpty(this.cacheDir);
    const agents = new Set<string>();
    for (const name of names) {
      const locked = /^(.+)\.install\.lock$/.exec(name);
      const temp = /^\.tmp-(.+)-[A-Za-z0-9]{6}$/.exec(name);
      const agentId = locked?.[1] ?? temp?.[1];
      if (agentId !== undefined && isValidAgentId(agentId)) agents.add(agentId);
    }
    const swept: string[] = [];
    let tempDirs = 0;
    for (const agentId of [...agents].sort()) {
      const lockFile = this.layout.lockFile(agentId);
      const hadLock = names.includes(`${agentId}.install.lock`);
      const lock = await InstallLock.tryAcquire(lockFile, { staleMs: this.limits.lockStaleMs });
      if (lock === null) continue;
      try {
        const removed = await this.removeOrphanedTempDirs(agentId);
        tempDirs += removed;
        if (removed > 0 || hadLock) swept.push(agentId);
      } finally {
        await lock.release();
      }
    }
    if (swept.length > 0)
      this.logger.warn("removed what killed installs left in the registry cache", {
        cacheDir: this.cacheDir,
        agents: swept,
        tempDirs,
      });
    return { agents: swept, tempDirs };
  }
}

function indexInfo(loaded: LoadedRegistryIndex): IndexInfo {
  return {
    url: loaded.url,
    source: loaded.source,
    stale: loaded.stale,
    fetchedAt: loaded.fetchedAt,
    ...(loaded.refreshError === undefined ? {} : { refreshError: loaded.refreshError }),
    droppedAgents: loaded.dropped.length,
  };
}

async function removeIfEmpty(path: string): Promise<void> {
  try {
    await rmdir(path);
  } catch {
    // Not empty, or already gone: either way there is nothing to tidy.
  }
}
