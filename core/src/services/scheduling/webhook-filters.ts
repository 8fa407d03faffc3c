import type { WebhookFilter } from "../../store/records.js";

/** One step of a JSON path: an object key or an array index. */
export type JsonPathStep = string | number;

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$-]*/;

/**
 * Parses the small JSON-path subset filters take: `$`, then `.key`, `['key']` / `["key"]` and
 * `[index]` steps (`$.pull_request.base.ref`, `$.commits[0].id`). Returns the steps, or why the
 * path is not one.
 */
export function parseJsonPath(path: string): { steps: JsonPathStep[] } | { problem: string } {
  if (!path.startsWith("$")) return { problem: "must start with $ (the body), as in $.action" };
  const steps: JsonPathStep[] = [];
  let rest = path.slice(1);
  while (rest.length > 0) {
    if (rest.startsWith(".")) {
      const name = IDENTIFIER.exec(rest.slice(1));
      if (name === null) return { problem: `has "." without a key name at "${rest}"; quote other keys as ['key']` };
      steps.push(name[0]);
      rest = rest.slice(1 + name[0].length);
      continue;
    }
    const index = /^\[(\d{1,9})\]/.exec(rest);
    if (index !== null) {
      steps.push(Number(index[1]));
      rest = rest.slice(index[0].length);
      continue;
    }
    const quoted = /^\[(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")\]/.exec(rest);
    if (quoted !== null) {
      steps.push((quoted[1] ?? quoted[2]!).replace(/\\(.)/g, "$1"));
      rest = rest.slice(quoted[0].length);
      continue;
    }
    return { problem: `cannot be read at "${rest}": use .key, ['key'] or [index] steps` };
  }
  return { steps };
}

/** The value a path names in a parsed body, or `undefined` when it names nothing. */
function valueAt(body: unknown, steps: readonly JsonPathStep[]): unknown {
  let current: unknown = body;
  for (const step of steps) {
    if (typeof step === "number") {
      if (!Array.isArray(current) || step >= current.length) return undefined;
      current = current[step];
    } else {
      if (
        current === null ||
        typeof current !== "object" ||
        Array.isArray(current) ||
        !Object.prototype.hasOwnProperty.call(current, step)
      )
        return undefined;
      current = (current as Record<string, unknown>)[step];
    }
  }
  return current;
}

/** A value as a skip's detail shows it: JSON, bounded. */
function shown(value: unknown): string {
  if (value === undefined) return "absent";
  const text = JSON.stringify(value);
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

/** Whether a request passes every filter (they all must match), and if not, which one failed and why. */
export function matchFilters(
  filters: readonly WebhookFilter[],
  request: { readonly headers: Readonly<Record<string, string | undefined>>; readonly bodyText: string },
): { readonly ok: true } | { readonly ok: false; readonly detail: string } {
  let parsed: { value: unknown } | null | undefined;
  for (const [index, filter] of filters.entries()) {
    if ("header" in filter) {
      const actual = request.headers[filter.header.toLowerCase()];
      if (actual !== filter.equals) {
        return {
          ok: false,
          detail: `filters[${index}]: header ${filter.header} is ${shown(actual)}, not ${JSON.stringify(filter.equals)}`,
        };
      }
      continue;
    }
    if (parsed === undefined) {
      try {
        parsed = { value: JSON.parse(request.bodyText) as unknown };
      } catch {
        parsed = null;
      }
    }
    if (parsed === null)
      return {
        ok: false,
        detail: `filters[${index}]: ${filter.jsonPath} needs a JSON body, and this body is not JSON`,
      };
    const steps = parseJsonPath(filter.jsonPath);
    const actual = "steps" in steps ? valueAt(parsed.value, steps.steps) : undefined;
    if (actual !== filter.equals) {
      return {
        ok: false,
        detail: `filters[${index}]: ${filter.jsonPath} is ${shown(actual)}, not ${JSON.stringify(filter.equals)}`,
      };
    }
  }
  return { ok: true };
}
