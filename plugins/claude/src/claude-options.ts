import { z } from "zod";

/** Validates {@link ClaudeOptions}. */
export const claudeOptionsSchema = z
  .object({
    /**
     * A `claude` executable to run instead of the one bundled with the SDK. It must be at least
     * the bundled version: the MCP servers (with the session's token) travel in the initialize
     * request, which older releases do not read.
     */
    claudePath: z.string().min(1, "claudePath must be a path to a claude executable").optional(),
    /** How long Claude Code may take to start and answer the initialize request (ms). */
    startupTimeoutMs: z.number().int().positive().default(60_000),
    /** After an interrupt, how long Claude Code may take to end the turn before its process is stopped (ms). */
    interruptGraceMs: z.number().int().positive().default(15_000),
    /** How long a status probe may take (ms). */
    probeTimeoutMs: z.number().int().positive().default(30_000),
  })
  .strict();

/** Driver options of a Claude instance. */
export type ClaudeOptions = z.output<typeof claudeOptionsSchema>;
