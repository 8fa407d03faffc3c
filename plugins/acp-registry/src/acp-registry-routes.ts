import {
  RegistryCatalog,
  acpRegistryCacheDir,
  isRegistryError,
  resolveRegistryUrl,
  type RegistryErrorReason,
} from "@switchyard/registry-cache";
import { SwitchyardError, defineRoute, defineRoutes, type ErrorCode } from "@switchyard/sdk";
import { z } from "zod";
import { InstallJobs } from "./acp-registry-install-jobs.js";

/**
 * The HTTP API side of this plugin, mounted by `switchyard serve` under
 * `/api/v1/plugins/acp-registry/` (the web UI's Registry page): search the registry, list what
 * is installed, and install as a background job whose progress can be read and followed. The
 * same catalog and installer as `switchyard registry …` (acp-registry-commands.ts).
 */

/** How long one read of a job waits for its next change before answering it unchanged. */
export const JOB_WAIT_MS = 20_000;

const AgentId = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[a-z0-9][a-z0-9._-]*$/, "must be a registry agent id (lowercase letters, digits, '.', '_' or '-')");

const SearchQuery = z
  .object({
    q: z.string().max(200).optional(),
    limit: z.coerce.number().int().min(1).max(100).optional(),
    all: z.enum(["true", "false"]).optional(),
  })
  .strict();

const JobParams = z.object({ jobId: z.string().regex(/^install_[a-f0-9]{16}$/, "is not an install job id") }).strict();
const JobQuery = z.object({ afterRevision: z.coerce.number().int().min(0).optional() }).strict();
const InstallBody = z.object({ agentId: AgentId }).strict();

/** Registry failures that mean the caller named something wrong; every other reason is the registry's or the machine's. */
const CODE_FOR_REASON: Partial<Record<RegistryErrorReason, ErrorCode>> = {
  invalid_agent_id: "invalid_input",
  not_found: "not_found",
  url_not_allowed: "invalid_input",
};

/** A registry failure as the spec error the host answers with; the registry's reason stays in `details.reason`. */
function asSpecError(error: unknown): unknown {
  if (!isRegistryError(error)) return error;
  return new SwitchyardError(CODE_FOR_REASON[error.reason] ?? "provider_error", error.message, {
    ...error.details,
    reason: error.reason,
  });
}

async function translated<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw asSpecError(error);
  }
}

/** The routes, one set per server: a catalog on the server's home and the jobs it runs. */
export const registryRoutes = defineRoutes({
  create(context) {
    const catalog = new RegistryCatalog({
      cacheDir: acpRegistryCacheDir(context.paths.home),
      registryUrl: resolveRegistryUrl(undefined),
      logger: { warn: (message, fields) => context.logger.warn(message, fields) },
    });
    // At server start: what installs killed mid-way left (temp folders, locks of dead processes) goes.
    void catalog.sweepAbandoned();
    const jobs = new InstallJobs(catalog, context.logger, context.signal);
    return [
      defineRoute({
        method: "GET",
        path: "/agents",
        operationId: "searchAgents",
        summary: "Search the ACP Registry's agents",
        description:
          "Ranked by id and name, then description. Each agent: name, description, its registry version and the versions installed here, the platforms it has builds for, whether it can run on this machine and with what. Fetches the registry index (cached for 15 minutes; a cached copy is used, marked stale, when the registry cannot be reached).",
        scope: "orchestration:read",
        query: SearchQuery,
        handle: ({ query }) =>
          translated(async () => {
            const result = await catalog.search(query.q ?? "", {
              ...(query.limit !== undefined ? { limit: query.limit } : {}),
              includeUnavailable: query.all === "true",
            });
            const loaded = await catalog.loadIndex();
            const installed = await catalog.list();
            return {
              query: result.query,
              total: result.total,
              hiddenUnavailable: result.hiddenUnavailable,
              index: { url: result.index.url, stale: result.index.stale, fetchedAt: result.index.fetchedAt },
              agents: result.agents.map((summary) => {
                const agent = loaded.index.agents.find((candidate) => candidate.id === summary.id);
                return {
                  id: summary.id,
                  name: summary.name,
                  description: summary.description,
                  version: summary.version,
                  installedVersions: installed
                    .filter((install) => install.agentId === summary.id)
                    .map((install) => install.version),
                  installed: summary.installed,
                  platforms: Object.keys(agent?.distribution.binary ?? {}).sort(),
                  packages: [...(agent?.distribution.npx ? ["npx"] : []), ...(agent?.distribution.uvx ? ["uvx"] : [])],
                  available: summary.available,
                  distribution: summary.distribution,
                  unavailableReason: summary.unavailableReason ?? null,
                  ...(summary.website !== undefined ? { website: summary.website } : {}),
                };
              }),
            };
          }),
      }),
      defineRoute({
        method: "GET",
        path: "/installed",
        operationId: "listInstalledAgents",
        summary: "List the agents installed in the registry cache",
        description: "From the cache's install receipts; no network.",
        scope: "orchestration:read",
        handle: () =>
          translated(async () => ({
            agents: (await catalog.list()).map((install) => ({
              agentId: install.agentId,
              version: install.version,
              distribution: install.distribution,
              platform: install.platform ?? null,
              integrity: install.integrity,
              installedAt: install.installedAt,
            })),
          })),
      }),
      defineRoute({
        method: "POST",
        path: "/install-jobs",
        operationId: "startInstall",
        summary: "Start installing an agent; answers at once with the install job",
        description:
          "Installs the agent's registry version for this machine (a checksummed archive, or a pinned npx/uvx package), as `switchyard registry install` does. Asking again while it runs, or after it finished, answers the same job (created: false) and installs nothing twice; after a failed job, asking again retries. Follow the job with GET install-jobs/{jobId}.",
        // An install changes what the whole server runs: the host grants this scope only to a token
        // for every project with the install verb, or operate at full-access (docs/api.md).
        scope: "orchestration:install",
        body: InstallBody,
        status: 202,
        handle: ({ body }) => translated(async () => jobs.start(body.agentId)),
      }),
      defineRoute({
        method: "GET",
        path: "/install-jobs",
        operationId: "listInstallJobs",
        summary: "List this server's install jobs, newest first",
        scope: "orchestration:read",
        handle: () => ({ jobs: jobs.list() }),
      }),
      defineRoute({
        method: "GET",
        path: "/install-jobs/{jobId}",
        operationId: "readInstallJob",
        summary: "Read an install job; with afterRevision, wait for its next change",
        description: `Phase waiting, download (bytes, percent), verify, extract, install_package, done or failed (error.code is the registry's reason, such as checksum_mismatch; nothing is left installed). With afterRevision it answers once the job's revision is above it, or after ${JOB_WAIT_MS / 1000} s unchanged: ask again with the revision you got to follow the install live.`,
        scope: "orchestration:read",
        params: JobParams,
        query: JobQuery,
        handle: async ({ params, query, signal }) => {
          const job =
            query.afterRevision === undefined
              ? jobs.get(params.jobId)
              : await jobs.waitForChange(params.jobId, query.afterRevision, JOB_WAIT_MS, signal);
          if (job === null)
            throw new SwitchyardError(
              "not_found",
              `There is no install job ${params.jobId} on this server (jobs are kept until it restarts). Start one with POST install-jobs.`,
              { jobId: params.jobId },
            );
          return { job };
        },
      }),
    ];
  },
});
