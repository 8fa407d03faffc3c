import { z } from "zod";

/** Validates {@link CursorOptions}. */
export const cursorOptionsSchema = z
  .object({
    /**
     * The Node that runs the Cursor SDK (≥ 22.13: its local storage needs `node:sqlite`, and its
     * native addons crash on Node 20). Default: the Node that runs Switchyard (≥ 22.19).
     */
    nodePath: z.string().min(1, "nodePath must be a path to a node executable").optional(),
    /**
     * The folder of the `@cursor/sdk` package the sidecar loads (…/node_modules/@cursor/sdk).
     * Default: the package beside this plugin, else among the sidecar Node's global packages
     * (`npm install -g @cursor/sdk` under that Node).
     */
    sdkPath: z.string().min(1, "sdkPath must be the folder of an installed @cursor/sdk package").optional(),
    /** The model of a new conversation when the thread names none. Default: the first model of the account's catalog. */
    defaultModel: z.string().min(1).optional(),
    /**
     * Where each thread's Cursor agent store (SQLite: agents, runs, checkpoints) lives. Default:
     * `<plugin data dir>/<instance id>`. One folder per thread below it.
     */
    storeDir: z.string().min(1).optional(),
    /** How long the sidecar may take to load the SDK and open the agent (ms). */
    startupTimeoutMs: z.number().int().positive().default(60_000),
    /** After an interrupt, how long the run may take to end before the sidecar is stopped (ms). */
    interruptGraceMs: z.number().int().positive().default(15_000),
    /** How long a status probe may take (ms). */
    probeTimeoutMs: z.number().int().positive().default(30_000),
  })
  .strict();

/** Driver options of a Cursor instance. */
export type CursorOptions = z.output<typeof cursorOptionsSchema>;
