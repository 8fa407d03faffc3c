import { z } from "zod";
import {
  hasErrorCode,
  ROUTE_SCOPES,
  type OptionsSchemaV1,
  type PluginRoute,
  type PluginRoutes,
  type RouteContext,
  type RouteScope,
} from "../../../spec/index.js";
import { ApiFailure, type ApiFailureCode } from "./api-errors.js";
import type { ApiRoute } from "./api-route.js";

/** Where plugins' operations live, below `/api/v1`: `/plugins/<plugin>/…`. */
export const PLUGIN_ROUTES_PREFIX = "/plugins";

/** A plugin's contributed routes as the plugin host hands them over. */
export interface RouteContribution {
  readonly routes: PluginRoutes;
  readonly plugin: { readonly name: string };
}

const SEGMENT = /^(?:[a-z0-9][a-z0-9-]*|\{[a-zA-Z][a-zA-Z0-9]*\})$/;
const OPERATION_ID = /^[a-zA-Z][a-zA-Z0-9]*$/;

/**
 * The plugin's part of its routes' paths: its package name without the npm scope and the
 * conventional `plugin-` prefix (`@switchyard/plugin-acp-registry` → `acp-registry`), so the
 * URL names what the plugin is, whoever published it.
 */
export function pluginRouteSegment(packageName: string): string {
  const bare = packageName.replace(/^@[^/]+\//, "").replace(/^plugin-/, "");
  return (
    bare
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, "-")
      .replace(/^-+|-+$/g, "") || "plugin"
  );
}

function pascal(text: string): string {
  return text
    .split("-")
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join("");
}

/** Why a contributed route cannot be mounted, or null. */
function routeProblem(route: unknown, seen: Set<string>): string | null {
  if (typeof route !== "object" || route === null) return "is not an object";
  const r = route as Partial<PluginRoute>;
  if (r.method !== "GET" && r.method !== "POST") return `has method ${JSON.stringify(r.method)} (expected GET or POST)`;
  if (
    typeof r.path !== "string" ||
    !r.path.startsWith("/") ||
    !r.path
      .slice(1)
      .split("/")
      .every((segment) => SEGMENT.test(segment))
  ) {
    return `has path ${JSON.stringify(r.path)} (expected /lowercase-segments with {name} parameters)`;
  }
  if (typeof r.operationId !== "string" || !OPERATION_ID.test(r.operationId))
    return `has operationId ${JSON.stringify(r.operationId)} (expected [a-zA-Z][a-zA-Z0-9]*)`;
  if (seen.has(r.operationId)) return `repeats operationId ${r.operationId}`;
  if (typeof r.summary !== "string" || r.summary.trim() === "") return "has no summary";
  if (!(ROUTE_SCOPES as readonly string[]).includes(r.scope as string))
    return `needs scope ${JSON.stringify(r.scope)} (expected one of ${ROUTE_SCOPES.join(", ")})`;
  for (const part of ["params", "query", "body"] as const) {
    const schema = r[part] as { "~standard"?: { validate?: unknown } } | undefined;
    if (schema !== undefined && typeof schema["~standard"]?.validate !== "function")
      return `has a ${part} schema that is not a Standard Schema validator (a zod 4 schema is one)`;
  }
  if (r.status !== undefined && r.status !== 200 && r.status !== 201 && r.status !== 202)
    return `has status ${JSON.stringify(r.status)} (expected 200, 201 or 202)`;
  if (typeof r.handle !== "function") return "has no handle()";
  return null;
}

/** Validates one part of the request with the plugin's schema, answering the router's invalid_request. */
async function validatePart(
  schema: OptionsSchemaV1<unknown> | undefined,
  value: Record<string, unknown>,
  location: "path" | "query" | "body",
  operationId: string,
): Promise<unknown> {
  if (schema === undefined) {
    const names = Object.keys(value);
    if (location !== "path" && names.length > 0)
      throw new ApiFailure(
        "invalid_request",
        `${operationId} takes no ${location === "query" ? "query parameters" : "body"} (got ${names.slice(0, 5).join(", ")}).`,
        { field: location },
      );
    return value;
  }
  const result = await schema["~standard"].validate(value);
  if (result.issues === undefined) return result.value;
  const issues = result.issues.slice(0, 5).map((issue) => ({
    field: [location, ...(issue.path ?? []).map((key) => String(typeof key === "object" ? key.key : key))].join("."),
    message: issue.message,
  }));
  throw new ApiFailure(
    "invalid_request",
    `Invalid ${location}: ${issues.map((issue) => `${issue.field}: ${issue.message}`).join("; ")}`,
    { field: issues[0]?.field ?? location, issues },
  );
}

/** The API code a plugin's spec error code is answered with. */
const FAILURE_FOR_CODE: Readonly<Record<string, ApiFailureCode>> = {
  invalid_input: "invalid_request",
  not_found: "not_found",
  conflict: "conflict",
  provider_unavailable: "provider_unavailable",
  timeout: "plugin_failed",
  cancelled: "plugin_failed",
  provider_error: "plugin_failed",
};

/** A plugin's thrown error as the typed failure the router answers; unknown errors pass through (a 500, logged). */
function asFailure(error: unknown, plugin: string): unknown {
  if (!hasErrorCode(error)) return error;
  const code = FAILURE_FOR_CODE[error.code];
  if (code === undefined) return error;
  const details = { ...(error.details ?? {}), plugin, ...(code === "plugin_failed" ? { code: error.code } : {}) };
  return new ApiFailure(code, error.message, details);
}

// What the router reads: every part passes as it came (text path parameters and query values,
// an object body), the plugin's own schemas validate them in `handle`.
const TEXT_RECORD = z.record(z.string(), z.string());
const PLUGIN_INPUT = z.object({
  params: TEXT_RECORD,
  query: z.record(z.string(), z.unknown()),
  body: z.record(z.string(), z.unknown()),
});

/** One contributed route as an API route: same router, authentication, scope check and failure shape. */
function toApiRoute(route: PluginRoute, plugin: string, segment: string): ApiRoute {
  const paramNames = [...route.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!);
  const path = `${PLUGIN_ROUTES_PREFIX}/${segment}${route.path === "/" ? "" : route.path}`;
  return {
    method: route.method,
    path,
    operationId: `${segment.replace(/-([a-z0-9])/g, (_m, c: string) => c.toUpperCase())}${pascal(route.operationId)}`,
    summary: route.summary,
    ...(route.description !== undefined ? { description: route.description } : {}),
    tag: `plugin:${segment}`,
    requires: route.scope satisfies RouteScope,
    ...(paramNames.length > 0
      ? { params: z.object(Object.fromEntries(paramNames.map((name) => [name, z.string()]))) }
      : {}),
    query: z.looseObject({}),
    ...(route.method === "POST" ? { body: z.looseObject({}) } : {}),
    inputParts: "separate",
    input: PLUGIN_INPUT,
    output: z.unknown(),
    outputName: `${pascal(segment)}${pascal(route.operationId)}Result`,
    ...(route.status !== undefined ? { status: route.status } : {}),
    handle: async (input: z.output<typeof PLUGIN_INPUT>, context) => {
      const params = await validatePart(route.params, input.params, "path", route.operationId);
      const query = await validatePart(route.query, input.query, "query", route.operationId);
      const body = await validatePart(route.body, input.body, "body", route.operationId);
      const caller = { scopes: [...context.caller.capabilities], key: context.caller.requestScope };
      try {
        return await route.handle({ params, query, body, caller, signal: context.signal });
      } catch (error) {
        throw asFailure(error, plugin);
      }
    },
  } as ApiRoute;
}

/**
 * Creates every plugin's routes (`routes.create(context)`) and turns them into API routes
 * under `/plugins/<plugin>/`. A plugin whose routes are malformed, whose `create` throws, or
 * whose path segment another plugin owns, gets none mounted and is reported in `refused` (the
 * server runs on without them); the others mount.
 *
 * A segment belongs to a plugin's identity, its package name: a built-in plugin's is its own
 * whatever the load order (a user's plugins load first), so a third-party package whose name
 * maps to the same segment (`plugin-acp-registry`, `@someone/acp-registry`) is the one refused,
 * and the web UI and clients keep talking to the built-in. Between two other plugins the first
 * loaded keeps it.
 */
export async function createPluginApiRoutes(
  contributions: readonly RouteContribution[],
  contextFor: (pluginName: string) => RouteContext,
  /** Operation ids already registered (the built-in routes'): a plugin's may not repeat one. */
  takenOperationIds: Iterable<string> = [],
  /** The built-in plugins' package names, whose segments no other plugin may take. */
  builtinPlugins: Iterable<string> = [],
): Promise<{ routes: ApiRoute[]; refused: { plugin: string; problem: string }[] }> {
  const taken = new Set(takenOperationIds);
  const routes: ApiRoute[] = [];
  const refused: { plugin: string; problem: string }[] = [];
  const builtinOwners = new Map([...builtinPlugins].map((name) => [pluginRouteSegment(name), name]));
  const owners = new Map<string, string>();
  for (const { routes: contributed, plugin } of contributions) {
    const segment = pluginRouteSegment(plugin.name);
    const builtin = builtinOwners.get(segment);
    if (builtin !== undefined && builtin !== plugin.name) {
      refused.push({
        plugin: plugin.name,
        problem: `its routes would live under ${PLUGIN_ROUTES_PREFIX}/${segment}/, which belong to the built-in plugin "${builtin}"; publish it under a name that maps to another segment`,
      });
      continue;
    }
    const owner = owners.get(segment);
    if (owner !== undefined) {
      refused.push({
        plugin: plugin.name,
        problem: `its routes would live under ${PLUGIN_ROUTES_PREFIX}/${segment}/, which plugin "${owner}" already uses`,
      });
      continue;
    }
    let created: readonly PluginRoute[];
    try {
      created = await contributed.create(contextFor(plugin.name));
    } catch (error) {
      refused.push({
        plugin: plugin.name,
        problem: `its routes' create() threw: ${error instanceof Error ? error.message : String(error)}`,
      });
      continue;
    }
    if (!Array.isArray(created)) {
      refused.push({ plugin: plugin.name, problem: "its routes' create() did not return an array of routes" });
      continue;
    }
    const seen = new Set<string>();
    const mounted: ApiRoute[] = [];
    let problem: string | null = null;
    for (const [index, route] of created.entries()) {
      problem = routeProblem(route, seen);
      if (problem !== null) {
        problem = `route ${index + 1} (${(route as Partial<PluginRoute> | null)?.operationId ?? "?"}) ${problem}`;
        break;
      }
      seen.add(route.operationId);
      mounted.push(toApiRoute(route, plugin.name, segment));
    }
    const duplicate =
      problem === null
        ? mounted.find(
            (route, index) =>
              mounted.findIndex((other) => other.method === route.method && other.path === route.path) !== index,
          )
        : undefined;
    if (duplicate !== undefined) problem = `two routes are ${duplicate.method} ${duplicate.path}`;
    const clash = problem === null ? mounted.find((route) => taken.has(route.operationId)) : undefined;
    if (clash !== undefined)
      problem = `its operation ${clash.operationId} (as the OpenAPI document names it) is already taken; rename the route's operationId`;
    if (problem !== null) {
      refused.push({ plugin: plugin.name, problem });
      continue;
    }
    owners.set(segment, plugin.name);
    for (const route of mounted) taken.add(route.operationId);
    routes.push(...mounted);
  }
  return { routes, refused };
}
