import { z } from "zod";
import { token } from "../util/di-token.js";
import { ProfileSchema } from "./profiles/profile-schema.js";
import { TreeBudgetSchema } from "./tree-budget-schema.js";

export { TreeBudgetSchema } from "./tree-budget-schema.js";

/** `[a-z0-9]` words joined by `-`, `_` or `.`: safe in ids, file names and MCP tool names. */
const identifier = z
  .string()
  .regex(
    /^[a-z0-9][a-z0-9._-]*$/,
    "must be lowercase letters, digits, '.', '_' or '-', starting with a letter or digit",
  );

/**
 * The MCP server key every harness sees, under the strictest rule any of them sets, so no
 * harness refuses a session over it:
 * - Codex takes `mcp_servers.<key>` only as `^[a-zA-Z0-9_-]+$` (no `.`), and adds `<key>-direct`;
 * - Claude and Pi name tools `mcp__<key>__<tool>` and split the name on `__`, and a Pi bridge's
 *   normalized alias turns `-` into `_` (seed 000: `mcp__t3_code__`), so no `__`, `_-`, `-_` or
 *   `--`, and no `_` or `-` at either end;
 * - OpenCode names tools `<key>_<tool>`, and Gemini-backed agents want a function name to start
 *   with a letter;
 * - OpenAI and Anthropic cap a tool name at 64 characters: `mcp__` + key + `__` + the longest
 *   tool name (`orchestrator_capabilities`, 25) leaves 32 for the key.
 * Lowercase like every other id here. `switchyard`, `t3-code` and `t3_code` all pass.
 */
const mcpServerName = z
  .string()
  .max(32, "must be at most 32 characters (harnesses cap tool names `mcp__<name>__<tool>` at 64)")
  .regex(
    /^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*$/,
    "must be lowercase letters and digits, starting with a letter, in words joined by single '-' or '_' (no '.', no '__'): the strictest MCP server key Codex, Claude, Pi and OpenCode all accept",
  );

/** One configured provider instance. */
export const ProviderInstanceConfigSchema = z
  .object({
    id: identifier,
    driver: identifier,
    enabled: z.boolean().default(true),
    displayName: z.string().min(1).optional(),
    homePath: z.string().min(1).nullable().optional(),
    environment: z.record(z.string(), z.string()).default({}),
    customModels: z.array(z.string().min(1)).default([]),
    /** Advertised models to list first and always (the user's model order), in this order. */
    favoriteModels: z.array(z.string().min(1)).default([]),
    options: z.record(z.string(), z.unknown()).default({}),
  })
  .strict();

/**
 * Where people and outside clients open the web UI when it is not the bound address (a reverse
 * proxy, a public name): an http(s) URL with no trailing slash, query, fragment or credentials.
 */
const webUrl = z.string().superRefine((value, ctx) => {
  let url: URL | null = null;
  try {
    url = new URL(value);
  } catch {
    // Reported below.
  }
  const problem =
    url === null
      ? "is not a URL"
      : url.protocol !== "http:" && url.protocol !== "https:"
        ? "is not an http(s) URL"
        : url.search !== "" || url.hash !== "" || url.username !== "" || url.password !== ""
          ? "has a query, fragment or credentials"
          : value.endsWith("/")
            ? "ends with a slash"
            : null;
  if (problem !== null)
    ctx.addIssue({
      code: "custom",
      message: `${JSON.stringify(value)} ${problem}; server.webUrl is the web UI's base, e.g. https://switchyard.example.com (no trailing slash)`,
    });
});

/** Server settings. */
export const ServerConfigSchema = z
  .object({
    host: z.literal("127.0.0.1").default("127.0.0.1"),
    port: z.number().int().min(0).max(65535).default(7410),
    mcpServerName: mcpServerName.default("switchyard"),
    /** The web UI's public base for thread URLs in results; unset: the address the server listens on. */
    webUrl: webUrl.optional(),
    /** The longest a blocking tool call waits before it returns a resumable pending result. */
    maxWaitMs: z.number().int().min(1000).max(600_000).default(50_000),
    /** Credential lifetime and idle expiry. */
    credentialMaxLifetimeMs: z
      .number()
      .int()
      .positive()
      .default(8 * 60 * 60 * 1000),
    credentialIdleMs: z
      .number()
      .int()
      .positive()
      .default(30 * 60 * 1000),
    /** Close a provider session after this long without a turn. */
    sessionIdleMs: z
      .number()
      .int()
      .positive()
      .default(15 * 60 * 1000),
    /**
     * At most this many provider sessions stay open without a turn; beyond it the one idle
     * longest closes at once (it resumes, or gets the history handed over, on its next turn).
     */
    maxIdleSessions: z.number().int().min(0).default(100),
    /** How often the provider snapshot (status, models, why not) is re-probed in the background. */
    providerStatusRefreshMs: z
      .number()
      .int()
      .min(10_000)
      .default(5 * 60 * 1000),
    /** The longest a client may take to send a request's headers (capped at requestTimeoutMs). */
    headersTimeoutMs: z.number().int().min(100).max(600_000).default(10_000),
    /** The longest a client may take to send a whole request, headers and body; answering it may take longer. */
    requestTimeoutMs: z.number().int().min(100).max(600_000).default(30_000),
    /** How long an idle keep-alive connection stays open. */
    keepAliveTimeoutMs: z.number().int().min(100).max(600_000).default(5_000),
    /** Open connections beyond this many are answered 503 and closed. */
    maxConnections: z.number().int().min(1).max(100_000).default(1024),
    /** Larger request bodies are refused with 413. */
    maxRequestBodyBytes: z
      .number()
      .int()
      .min(1024)
      .max(256 * 1024 * 1024)
      .default(4 * 1024 * 1024),
    /** Open `GET /api/v1/events` streams beyond this many are answered 503 (they also count as connections). */
    maxEventStreams: z.number().int().min(1).max(100_000).default(256),
    /**
     * The most of them one credential (a token, with every web UI session made from it; a
     * provider session's; a link grant's) may hold at once; more are answered 429. Unset: an
     * eighth of maxEventStreams, at least 1, so one credential cannot hold every stream.
     */
    maxEventStreamsPerCredential: z.number().int().min(1).max(100_000).optional(),
    /** How often an event stream sends a `: ping` comment, and checks that its client still reads. */
    eventStreamHeartbeatMs: z.number().int().min(50).max(600_000).default(15_000),
    /** A stream whose client leaves more unsent than this (bytes, or events) is cut off; it resumes with Last-Event-ID. */
    eventStreamMaxBufferedBytes: z
      .number()
      .int()
      .min(1024)
      .max(256 * 1024 * 1024)
      .default(1024 * 1024),
    eventStreamMaxBufferedEvents: z.number().int().min(1).max(1_000_000).default(5_000),
    /**
     * How long a database write waits for another connection's write lock (a CLI command, a
     * migration) before it fails with `store_busy`; provider events and effects then try again.
     */
    storeBusyTimeoutMs: z.number().int().min(100).max(600_000).default(5_000),
  })
  .strict();

/** Spawn budgets that keep delegation from running away, and usage budgets on whole trees. */
export const BudgetConfigSchema = z
  .object({
    maxDelegationDepth: z.number().int().min(1).max(32).default(4),
    maxConcurrentChildrenPerRun: z.number().int().min(1).max(100).default(8),
    maxTasksPerRootThread: z.number().int().min(1).max(10_000).default(100),
    /** Limits on a root thread's whole tree (its own turns and every task below it). */
    rootThread: TreeBudgetSchema.default({}),
    /** Default limits of each delegated task's tree (its child thread and everything below it), unless `delegate_task` sets a budget. */
    delegatedTask: TreeBudgetSchema.default({}),
  })
  .strict();

/** A model's list price in US dollars per million tokens; cache prices default to the input price. */
export const ModelPriceSchema = z
  .object({
    input: z.number().min(0),
    output: z.number().min(0),
    cacheRead: z.number().min(0).optional(),
    cacheWrite: z.number().min(0).optional(),
  })
  .strict();

/**
 * The price table that estimates a turn's cost when its provider reports none. Keys are model
 * ids; a key also matches ids that continue it after `-`, `.`, `:`, `@` or `_`
 * (`claude-sonnet-4-5` matches `claude-sonnet-4-5-20250929`), the longest key winning.
 * `providers.<instance>.<model>` wins over `models.<model>`, which wins over the shipped defaults.
 */
export const PricingConfigSchema = z
  .object({
    /** The day these prices were taken (shown with every estimate made from them). */
    asOf: z
      .string()
      .regex(/^\d{4}-\d{2}-\d{2}$/, "must be a date, YYYY-MM-DD")
      .optional(),
    /** Use the prices Switchyard ships for models the config does not price. */
    useDefaults: z.boolean().default(true),
    models: z.record(z.string().min(1), ModelPriceSchema).default({}),
    providers: z.record(z.string().min(1), z.record(z.string().min(1), ModelPriceSchema)).default({}),
  })
  .strict();

/** A time zone name the runtime knows (an IANA name such as `Europe/Berlin`, or `UTC`). */
const timeZone = z
  .string()
  .min(1)
  .refine(
    (name) => {
      try {
        new Intl.DateTimeFormat("en-US", { timeZone: name });
        return true;
      } catch {
        return false;
      }
    },
    { message: 'is not a time zone this runtime knows; use an IANA name such as "Europe/Berlin" or "UTC"' },
  );

/** Scheduled tasks (schedule_task) and their webhooks. */
export const SchedulingConfigSchema = z
  .object({
    /** The shortest interval (and the shortest gap between two cron runs) a task may have. */
    minIntervalMs: z.number().int().min(10).max(86_400_000).default(60_000),
    /** The server's local time zone for cron and one-shot times; default the process's own. */
    timeZone: timeZone.optional(),
    /** The longest prompt a scheduled task may have, in characters. */
    maxPromptChars: z.number().int().min(100).max(1_000_000).default(100_000),
    /** Larger webhook bodies are refused with 413. */
    maxWebhookBodyBytes: z
      .number()
      .int()
      .min(1024)
      .max(64 * 1024 * 1024)
      .default(1024 * 1024),
    /** A signed webhook request whose timestamp is further than this from now is refused; a repeat within it is a replay. */
    webhookReplayWindowMs: z
      .number()
      .int()
      .min(1_000)
      .max(86_400_000)
      .default(5 * 60 * 1000),
    /** A missed fixed-time or interval occurrence runs once on catch-up if it is at most this late; older ones are skipped (recorded). */
    catchUpWindowMs: z
      .number()
      .int()
      .min(0)
      .max(30 * 86_400_000)
      .default(24 * 60 * 60 * 1000),
    /**
     * The most webhook requests one task records within a window: past it a request is refused
     * with 429 and Retry-After, and nothing is written, so a flood costs the store nothing more.
     */
    webhookRateLimit: z
      .object({
        requests: z.number().int().min(1).max(1_000_000).default(60),
        windowMs: z.number().int().min(1_000).max(86_400_000).default(60_000),
      })
      .strict()
      .default({ requests: 60, windowMs: 60_000 }),
    /**
     * How many triggers a task keeps, and for how long: older ones are removed from the store,
     * never one whose run has not finished, the one its next occurrence counts from, or one a
     * replay, dedupe or rate window still needs.
     */
    triggerRetention: z
      .object({
        maxPerTask: z.number().int().min(1).max(1_000_000).default(1_000),
        maxAgeMs: z
          .number()
          .int()
          .min(1_000)
          .max(3_650 * 86_400_000)
          .default(30 * 86_400_000),
      })
      .strict()
      .default({ maxPerTask: 1_000, maxAgeMs: 30 * 86_400_000 }),
  })
  .strict();

/**
 * Reach: which projects on this server an agent may work in through the orchestration tools
 * (delegate_task, create_threads, t3_thread_launch, list, read, send). Client tokens carry their
 * own project scope (`switchyard token issue --projects`); this is the agents' one.
 */
export const ReachConfigSchema = z
  .object({
    /**
     * `all` (default): an agent may target every project on this server, as the user who runs
     * it may. `own`: only its own thread's project (a child delegated elsewhere is in that
     * project, and so reaches only it).
     */
    agentProjects: z.enum(["all", "own"]).default("all"),
  })
  .strict();

/**
 * Workspaces of delegated and created threads (`workspace` on delegate_task and create_threads):
 * where new worktrees go, what a project does by default, and how long a finished one stays.
 */
export const WorkspacesConfigSchema = z
  .object({
    /**
     * The folder new worktrees and scratch folders go in (default `<home>/worktrees`). It must lie
     * outside every project, so a child's worktree is never inside its parent's tree.
     */
    root: z.string().min(1).optional(),
    /**
     * A project's default strategy when a call names none, by project id or folder (default
     * `shared`, seed 000's: the parent's workspace). A default of `worktree` on a folder that is not a git
     * repository falls back to `shared`.
     */
    projectDefaults: z.record(z.string().min(1), z.enum(["shared", "worktree", "scratch"])).default({}),
    /**
     * How long a workspace whose changes were applied, discarded or kept stays once its thread is
     * settled, before its worktree (and, unless kept, its branch) is removed.
     */
    retentionMs: z
      .number()
      .int()
      .min(0)
      .max(365 * 86_400_000)
      .default(24 * 60 * 60 * 1000),
    /** How long a git command waits, retrying, for a lock another git process holds (index.lock) before it fails. */
    lockWaitMs: z.number().int().min(0).max(600_000).default(10_000),
  })
  .strict();

/** The whole `config.json`. */
export const SwitchyardConfigSchema = z
  .object({
    $schema: z.string().optional(),
    providers: z.array(ProviderInstanceConfigSchema).default([]),
    plugins: z.array(z.string().min(1)).default([]),
    server: ServerConfigSchema.default(ServerConfigSchema.parse({})),
    budgets: BudgetConfigSchema.default(BudgetConfigSchema.parse({})),
    pricing: PricingConfigSchema.default(PricingConfigSchema.parse({})),
    scheduling: SchedulingConfigSchema.default(SchedulingConfigSchema.parse({})),
    reach: ReachConfigSchema.default(ReachConfigSchema.parse({})),
    workspaces: WorkspacesConfigSchema.default(WorkspacesConfigSchema.parse({})),
    /**
     * The user's agent profiles (docs/profiles.md): named kits delegate_task takes as `profile`.
     * A name given twice is a conflict `switchyard profiles list --check` reports (the first wins).
     */
    profiles: z.array(ProfileSchema).default([]),
  })
  .strict()
  .superRefine((config, ctx) => {
    const seen = new Map<string, number>();
    config.providers.forEach((provider, index) => {
      const first = seen.get(provider.id);
      if (first !== undefined) {
        ctx.addIssue({
          code: "custom",
          path: ["providers", index, "id"],
          message: `duplicate provider id "${provider.id}" (also at providers[${first}])`,
        });
      } else seen.set(provider.id, index);
    });
  });

export type SwitchyardConfig = z.infer<typeof SwitchyardConfigSchema>;
export type ProviderInstanceConfig = z.infer<typeof ProviderInstanceConfigSchema>;
export type ServerConfig = z.infer<typeof ServerConfigSchema>;
export type BudgetConfig = z.infer<typeof BudgetConfigSchema>;
export type TreeBudgetConfig = z.infer<typeof TreeBudgetSchema>;
export type ModelPrice = z.infer<typeof ModelPriceSchema>;
export type PricingConfig = z.infer<typeof PricingConfigSchema>;
export type SchedulingConfig = z.infer<typeof SchedulingConfigSchema>;
export type ReachConfig = z.infer<typeof ReachConfigSchema>;
export type WorkspacesConfig = z.infer<typeof WorkspacesConfigSchema>;

/** DI token: the validated `config.json` the host runs with. */
export const ConfigToken = token<SwitchyardConfig>("Config");
