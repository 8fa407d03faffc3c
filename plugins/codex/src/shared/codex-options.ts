import { z } from "zod";

/** A Codex config value (what `config.toml` can hold; no nulls). */
export type CodexConfigValue =
  string | number | boolean | readonly CodexConfigValue[] | { readonly [key: string]: CodexConfigValue };

const CodexConfigValueSchema: z.ZodType<CodexConfigValue> = z.lazy(() =>
  z.union([
    z.string(),
    z.number().finite(),
    z.boolean(),
    z.array(CodexConfigValueSchema),
    z.record(z.string(), CodexConfigValueSchema),
  ]),
);

const common = {
  /** The Codex executable (a path, or a command on PATH). Default: the installed `@openai/codex` native binary, else `codex` on PATH. */
  codexPath: z.string().min(1, "codexPath must be a path or a command on PATH").optional(),
  /** Extra Codex config (strings, numbers, booleans, arrays, tables; no nulls). */
  config: z.record(z.string(), CodexConfigValueSchema).default({}),
};

/** `codex` driver (app-server) options. */
export const codexOptionsSchema = z
  .object({
    ...common,
    /** How long setup requests (`initialize`, `thread/start|resume|fork`) may take. */
    requestTimeoutMs: z.number().int().positive().default(30_000),
    /** How long an interrupted turn may take to end before the app-server is restarted. */
    interruptTimeoutMs: z.number().int().positive().default(15_000),
  })
  .strict();

/** `codex-exec` driver (`@openai/codex-sdk`) options. */
export const codexExecOptionsSchema = z
  .object({
    ...common,
    /** Pass `--skip-git-repo-check` (workspaces need not be git repositories). */
    skipGitRepoCheck: z.boolean().default(true),
  })
  .strict();

/** Options of the `codex` driver (app-server). */
export type CodexOptions = z.output<typeof codexOptionsSchema>;

/** Options of the `codex-exec` driver. */
export type CodexExecOptions = z.output<typeof codexExecOptionsSchema>;

/** Reads options that may not have passed through the schema (a driver created directly). */
export function codexOptionsOf(value: unknown): CodexOptions {
  return codexOptionsSchema.parse(value ?? {});
}

/** Reads exec options that may not have passed through the schema. */
export function codexExecOptionsOf(value: unknown): CodexExecOptions {
  return codexExecOptionsSchema.parse(value ?? {});
}
