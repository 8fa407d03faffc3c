import { z } from "zod";

/** Validates {@link OpenCodeOptions}. */
export const openCodeOptionsSchema = z
  .object({
    /**
     * The `opencode` executable. Default: the native binary of the installed `opencode-ai`
     * package (`opencode-<platform>-<arch>`), else `opencode` on PATH.
     */
    opencodePath: z.string().min(1, "opencodePath must be a path or a command on PATH").optional(),
    /** How long `opencode serve` may take to print its listening line (ms). */
    startupTimeoutMs: z.number().int().positive().default(60_000),
    /** How long a request to the server other than a prompt may take (ms). */
    requestTimeoutMs: z.number().int().positive().default(30_000),
    /** After `session.abort`, how long OpenCode may take to go idle before its server is restarted (ms). */
    interruptGraceMs: z.number().int().positive().default(15_000),
    /**
     * The opencode.json merged under Switchyard's own entries. Default: `<homePath>/opencode.json`,
     * or `$XDG_CONFIG_HOME/opencode/opencode.json` (`~/.config/opencode/opencode.json`) when the
     * instance has no homePath.
     */
    configFile: z.string().min(1).optional(),
  })
  .strict();

/** Driver options of an OpenCode instance. */
export type OpenCodeOptions = z.output<typeof openCodeOptionsSchema>;
