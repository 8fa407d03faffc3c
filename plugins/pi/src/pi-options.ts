import { z } from "zod";

/**
 * Flags the adapter owns: the RPC mode, the session files (the resume cursor) and the model
 * (chosen per thread). `--api-key` is refused because argv is visible to every local user.
 */
export const RESERVED_PI_FLAGS: readonly string[] = [
  "--mode",
  "--print",
  "-p",
  "--session",
  "--session-dir",
  "--no-session",
  "--continue",
  "-c",
  "--resume",
  "-r",
  "--fork",
  "--export",
  "--model",
  "--provider",
  "--api-key",
  "--list-models",
  "--help",
  "-h",
  "--version",
  "-v",
];

/** The reserved flags among `args` (`--flag` and `--flag=value` forms). */
export function reservedFlagsIn(args: readonly string[]): string[] {
  return args.filter((arg) => RESERVED_PI_FLAGS.includes(arg.split("=")[0]!));
}

/** Validates {@link PiOptions}. */
export const piOptionsSchema = z
  .object({
    /**
     * The Pi CLI: an executable, or a `cli.js` run with this Node. Default: `pi` on PATH, else the
     * installed `@earendil-works/pi-coding-agent` package (then the old `@mariozechner/…` one).
     */
    piPath: z.string().min(1, "piPath must be a path or a command on PATH").optional(),
    /** Extra launch arguments (`--thinking high`, `--no-context-files`…). Reserved flags are refused. */
    extraArgs: z
      .array(z.string())
      .default([])
      .superRefine((args, ctx) => {
        const reserved = reservedFlagsIn(args);
        if (reserved.length > 0) {
          ctx.addIssue({
            code: "custom",
            message: `extraArgs may not contain ${reserved.join(", ")}: the adapter sets the RPC mode, the session files and the model itself (put secrets such as API keys in the instance environment)`,
          });
        }
      }),
    /** Pass `--offline` (no startup network operations such as update checks). */
    offline: z.boolean().default(true),
    /** How long Pi may take to start and answer `get_state` (ms). */
    startupTimeoutMs: z.number().int().positive().default(60_000),
    /** How long a command other than `prompt` may take to be answered (ms). */
    requestTimeoutMs: z.number().int().positive().default(30_000),
    /** After `abort`, how long Pi may take to end the run before its process is killed (ms). */
    interruptGraceMs: z.number().int().positive().default(15_000),
  })
  .strict();

/** Driver options of a Pi instance. */
export type PiOptions = z.output<typeof piOptionsSchema>;
