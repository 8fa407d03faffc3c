import type { OptionsSchema, OptionsValidationResult } from "@switchyard/sdk";

/** Driver options of a Pi instance. */
export interface PiOptions {
  /**
   * The Pi CLI: an executable, or a `cli.js` run with this Node. Default: the installed
   * `@mariozechner/pi-coding-agent` package, else `pi` on PATH.
   */
  readonly piPath?: string;
  /** Extra launch arguments (`--thinking high`, `--no-context-files`…). Reserved flags are refused. */
  readonly extraArgs: readonly string[];
  /** Pass `--offline` (no startup network operations such as update checks). Default true. */
  readonly offline: boolean;
  /** How long Pi may take to start and answer `get_state` (ms). Default 60 000. */
  readonly startupTimeoutMs: number;
  /** How long a command other than `prompt` may take to be answered (ms). Default 30 000. */
  readonly requestTimeoutMs: number;
  /** After `abort`, how long Pi may take to end the run before its process is killed (ms). Default 15 000. */
  readonly interruptGraceMs: number;
}

const DEFAULTS: Omit<PiOptions, "piPath"> = {
  extraArgs: [],
  offline: true,
  startupTimeoutMs: 60_000,
  requestTimeoutMs: 30_000,
  interruptGraceMs: 15_000,
};

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

const positiveInt = (value: unknown): value is number => typeof value === "number" && Number.isInteger(value) && value > 0;

/** Validates {@link PiOptions} (Standard Schema v1, no validator library needed). */
export const piOptionsSchema: OptionsSchema<PiOptions> = {
  "~standard": {
    version: 1,
    vendor: "switchyard-pi",
    validate(value: unknown): OptionsValidationResult<PiOptions> {
      const input = (value ?? {}) as Record<string, unknown>;
      if (typeof input !== "object" || Array.isArray(input)) return { issues: [{ message: "Pi options must be an object." }] };
      const issues: { message: string; path: string[] }[] = [];
      if (input["piPath"] !== undefined && (typeof input["piPath"] !== "string" || input["piPath"] === "")) {
        issues.push({ message: "piPath must be a non-empty string", path: ["piPath"] });
      }
      const extraArgs = input["extraArgs"];
      if (extraArgs !== undefined) {
        if (!Array.isArray(extraArgs) || extraArgs.some((arg) => typeof arg !== "string")) {
          issues.push({ message: "extraArgs must be an array of strings", path: ["extraArgs"] });
        } else {
          const reserved = reservedFlagsIn(extraArgs as string[]);
          if (reserved.length > 0) {
            issues.push({
              message: `extraArgs may not contain ${reserved.join(", ")}: the adapter sets the RPC mode, the session files and the model itself (put secrets such as API keys in the instance environment)`,
              path: ["extraArgs"],
            });
          }
        }
      }
      if (input["offline"] !== undefined && typeof input["offline"] !== "boolean") issues.push({ message: "offline must be a boolean", path: ["offline"] });
      for (const key of ["startupTimeoutMs", "requestTimeoutMs", "interruptGraceMs"] as const) {
        if (input[key] !== undefined && !positiveInt(input[key])) issues.push({ message: `${key} must be a positive integer (ms)`, path: [key] });
      }
      const known = ["piPath", "extraArgs", "offline", "startupTimeoutMs", "requestTimeoutMs", "interruptGraceMs"];
      for (const key of Object.keys(input)) if (!known.includes(key)) issues.push({ message: `unknown option "${key}"`, path: [key] });
      if (issues.length > 0) return { issues };
      return {
        value: {
          ...(typeof input["piPath"] === "string" ? { piPath: input["piPath"] } : {}),
          extraArgs: (extraArgs as string[] | undefined) ?? DEFAULTS.extraArgs,
          offline: (input["offline"] as boolean | undefined) ?? DEFAULTS.offline,
          startupTimeoutMs: (input["startupTimeoutMs"] as number | undefined) ?? DEFAULTS.startupTimeoutMs,
          requestTimeoutMs: (input["requestTimeoutMs"] as number | undefined) ?? DEFAULTS.requestTimeoutMs,
          interruptGraceMs: (input["interruptGraceMs"] as number | undefined) ?? DEFAULTS.interruptGraceMs,
        },
      };
    },
  },
};
