import { readFileSync, existsSync } from "node:fs";
import type { z } from "zod";
import { SwitchyardError } from "../spec/index.js";
import { SwitchyardConfigSchema, type SwitchyardConfig } from "./config-schema.js";
import { findJsonSyntaxProblem } from "./json-syntax.js";

/** Formats a zod issue path the way people write it: `providers[0].options.port`. */
export function formatIssuePath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else out += out === "" ? String(key) : `.${String(key)}`;
  }
  return out === "" ? "(root)" : out;
}

/** Builds the typed error for a bad config: names the file, the field and why. */
export function configError(
  file: string,
  issues: readonly z.core.$ZodIssue[] | readonly { path: readonly PropertyKey[]; message: string }[],
): SwitchyardError {
  const lines = issues.map((issue) => `  ${formatIssuePath(issue.path as PropertyKey[])}: ${issue.message}`);
  const first = issues[0];
  return new SwitchyardError(
    "config_invalid",
    `Invalid config file ${file}:\n${lines.join("\n")}\nFix the field${issues.length > 1 ? "s" : ""} above and run the command again.`,
    {
      file,
      path: first ? formatIssuePath(first.path as PropertyKey[]) : "(root)",
      issues: issues.map((i) => ({ path: formatIssuePath(i.path as PropertyKey[]), message: i.message })),
    },
  );
}

/** Parses a config object (already read from JSON) or throws `config_invalid`. */
export function parseConfig(raw: unknown, file: string): SwitchyardConfig {
  const result = SwitchyardConfigSchema.safeParse(raw);
  if (!result.success) throw configError(file, result.error.issues);
  return result.data;
}

/**
 * Reads `config.json`. A missing file means the embedded defaults (no providers, default
 * server settings), so `switchyard serve` works on a fresh machine.
 */
export function loadConfig(file: string): SwitchyardConfig {
  if (!existsSync(file)) return parseConfig({}, file);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new SwitchyardError("config_invalid", `Cannot read config file ${file}: ${(error as Error).message}`, {
      file,
    });
  }
  // Editors on Windows may save a byte order mark; it is not part of the JSON.
  if (text.startsWith("\uFEFF")) text = text.slice(1);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    const problem = findJsonSyntaxProblem(text);
    const where = problem === null ? "(root)" : `line ${problem.line}, column ${problem.column}`;
    const why = problem === null ? (error as Error).message : problem.reason;
    throw new SwitchyardError(
      "config_invalid",
      `Invalid config file ${file}:\n  ${where}: not valid JSON: ${why}\nFix the JSON and run the command again.`,
      {
        file,
        path: "(root)",
        ...(problem !== null ? { line: problem.line, column: problem.column } : {}),
      },
    );
  }
  return parseConfig(raw, file);
}
