/** A TOML value the Codex config writer supports. */
export type TomlValue = string | number | boolean | TomlValue[] | { [key: string]: TomlValue };

/** Quotes a key unless it is a bare key. */
export function tomlKey(key: string): string {
  return /^[A-Za-z0-9_-]+$/.test(key) ? key : JSON.stringify(key);
}

/** A TOML inline value (JSON string escapes are valid TOML basic-string escapes). */
export function tomlValue(value: TomlValue): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value)) return `[${value.map(tomlValue).join(", ")}]`;
  return `{ ${Object.entries(value)
    .map(([k, v]) => `${tomlKey(k)} = ${tomlValue(v)}`)
    .join(", ")} }`;
}

/** Renders a table body: `key = value` lines. */
export function tomlLines(entries: Record<string, TomlValue | undefined>): string {
  return Object.entries(entries)
    .filter((entry): entry is [string, TomlValue] => entry[1] !== undefined)
    .map(([k, v]) => `${tomlKey(k)} = ${tomlValue(v)}`)
    .join("\n");
}
