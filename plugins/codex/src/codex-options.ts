import type { OptionsSchema, OptionsValidationResult } from "@switchyard/sdk";

/** A Codex config value (what `config.toml` can hold; no nulls). */
export type CodexConfigValue = string | number | boolean | readonly CodexConfigValue[] | { readonly [key: string]: CodexConfigValue };

/** Options of the `codex` driver (app-server). */
export interface CodexOptions {
  /** The Codex executable (a path, or a command on PATH). Default: the installed `@openai/codex` native binary, else `codex` on PATH. */
  readonly codexPath?: string;
  /** Extra Codex config for every thread (`thread/start` `config`), for example `{ "model_reasoning_effort": "low" }`. */
  readonly config: Readonly<Record<string, CodexConfigValue>>;
  /** How long setup requests (`initialize`, `thread/start|resume|fork`) may take. Default 30 000 ms. */
  readonly requestTimeoutMs: number;
  /** How long an interrupted turn may take to end before the app-server is restarted. Default 15 000 ms (3 000 for a hard stop). */
  readonly interruptTimeoutMs: number;
}

/** Options of the `codex-exec` driver (`@openai/codex-sdk`). */
export interface CodexExecOptions {
  /** The Codex executable passed as `codexPathOverride`. Default: the installed `@openai/codex` native binary, else `codex` on PATH. */
  readonly codexPath?: string;
  /** Extra Codex config for every turn (the SDK's `config`, flattened to `--config key=value`). */
  readonly config: Readonly<Record<string, CodexConfigValue>>;
  /** Pass `--skip-git-repo-check` (default true: workspaces need not be git repositories). */
  readonly skipGitRepoCheck: boolean;
}

type Issue = { readonly message: string; readonly path: readonly string[] };

function isConfigValue(value: unknown, depth = 0): value is CodexConfigValue {
  if (depth > 16) return false;
  if (typeof value === "string" || typeof value === "boolean") return true;
  if (typeof value === "number") return Number.isFinite(value);
  if (Array.isArray(value)) return value.every((entry) => isConfigValue(entry, depth + 1));
  if (typeof value === "object" && value !== null) return Object.values(value).every((entry) => isConfigValue(entry, depth + 1));
  return false;
}

function readCommon(input: Record<string, unknown>, issues: Issue[]): { codexPath?: string; config: Record<string, CodexConfigValue> } {
  if (input.codexPath !== undefined && (typeof input.codexPath !== "string" || input.codexPath.length === 0)) {
    issues.push({ message: "codexPath must be a non-empty string (a path or a command on PATH)", path: ["codexPath"] });
  }
  let config: Record<string, CodexConfigValue> = {};
  if (input.config !== undefined) {
    if (typeof input.config !== "object" || input.config === null || Array.isArray(input.config) || !isConfigValue(input.config)) {
      issues.push({ message: "config must be an object of Codex config values (strings, numbers, booleans, arrays, tables; no nulls)", path: ["config"] });
    } else {
      config = input.config as Record<string, CodexConfigValue>;
    }
  }
  return { ...(typeof input.codexPath === "string" && input.codexPath.length > 0 ? { codexPath: input.codexPath } : {}), config };
}

function positiveInteger(input: Record<string, unknown>, key: string, fallback: number, issues: Issue[]): number {
  const value = input[key];
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value <= 0) {
    issues.push({ message: `${key} must be a positive integer (milliseconds)`, path: [key] });
    return fallback;
  }
  return value;
}

function unknownKeys(input: Record<string, unknown>, known: readonly string[], issues: Issue[]): void {
  for (const key of Object.keys(input)) if (!known.includes(key)) issues.push({ message: `unknown option "${key}" (known: ${known.join(", ")})`, path: [key] });
}

function asObject(value: unknown): Record<string, unknown> | null {
  if (value === undefined || value === null) return {};
  return typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

/** Validates `codex` driver options. */
export const codexOptionsSchema: OptionsSchema<CodexOptions> = {
  "~standard": {
    version: 1,
    vendor: "switchyard-codex",
    validate(value: unknown): OptionsValidationResult<CodexOptions> {
      const input = asObject(value);
      if (input === null) return { issues: [{ message: "Codex options must be an object." }] };
      const issues: Issue[] = [];
      const common = readCommon(input, issues);
      const requestTimeoutMs = positiveInteger(input, "requestTimeoutMs", 30_000, issues);
      const interruptTimeoutMs = positiveInteger(input, "interruptTimeoutMs", 15_000, issues);
      unknownKeys(input, ["codexPath", "config", "requestTimeoutMs", "interruptTimeoutMs"], issues);
      if (issues.length > 0) return { issues };
      return { value: { ...common, requestTimeoutMs, interruptTimeoutMs } };
    },
  },
};

/** Validates `codex-exec` driver options. */
export const codexExecOptionsSchema: OptionsSchema<CodexExecOptions> = {
  "~standard": {
    version: 1,
    vendor: "switchyard-codex",
    validate(value: unknown): OptionsValidationResult<CodexExecOptions> {
      const input = asObject(value);
      if (input === null) return { issues: [{ message: "Codex exec options must be an object." }] };
      const issues: Issue[] = [];
      const common = readCommon(input, issues);
      if (input.skipGitRepoCheck !== undefined && typeof input.skipGitRepoCheck !== "boolean") {
        issues.push({ message: "skipGitRepoCheck must be a boolean", path: ["skipGitRepoCheck"] });
      }
      unknownKeys(input, ["codexPath", "config", "skipGitRepoCheck"], issues);
      if (issues.length > 0) return { issues };
      return { value: { ...common, skipGitRepoCheck: input.skipGitRepoCheck !== false } };
    },
  },
};

/** Reads options that may not have passed through the schema (a driver created directly). */
export function codexOptionsOf(value: unknown): CodexOptions {
  const result = codexOptionsSchema["~standard"].validate(value) as OptionsValidationResult<CodexOptions>;
  if (result.issues) throw new TypeError(`Invalid codex options: ${result.issues.map((issue) => issue.message).join("; ")}`);
  return result.value;
}

/** Reads exec options that may not have passed through the schema. */
export function codexExecOptionsOf(value: unknown): CodexExecOptions {
  const result = codexExecOptionsSchema["~standard"].validate(value) as OptionsValidationResult<CodexExecOptions>;
  if (result.issues) throw new TypeError(`Invalid codex-exec options: ${result.issues.map((issue) => issue.message).join("; ")}`);
  return result.value;
}
