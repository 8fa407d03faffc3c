import type { PluginLoggerV1, PluginPathsV1 } from "./plugin-services.js";
import type { OptionsSchemaV1 } from "./schema.js";

/**
 * HTTP API contributions: a plugin may add operations to Switchyard's HTTP API (the web UI's
 * Registry page reads the ACP Registry plugin's). The host mounts them under
 * `/api/v1/plugins/<plugin>/…` (the package name without its `@scope/` and a `plugin-`
 * prefix: `@switchyard/plugin-acp-registry` → `acp-registry`) and gives them exactly what the
 * built-in routes have: bearer tokens and the web UI's session cookie, the scope check, the
 * same-origin and CSRF rules for the cookie, request-size limits and typed JSON failures
 * `{ error: { code, message, details } }`. A plugin only validates its input and answers.
 */

/**
 * The scopes a route may need: the verbs tokens are issued with (`switchyard token issue`).
 * `orchestration:install` is for work that changes the whole server (installing an agent): a
 * token issued with the `install` verb for every project holds it, and so does an `operate`
 * token for every project whose ceiling is `full-access`; a token scoped to some projects, or
 * below full-access, never does.
 * @experimental
 */
export const ROUTE_SCOPES = [
  "orchestration:read",
  "orchestration:operate",
  "orchestration:approve",
  "orchestration:install",
] as const;

/** The scope a route needs, one of {@link ROUTE_SCOPES}. @experimental */
export type RouteScopeV1 = (typeof ROUTE_SCOPES)[number];

/** What the host lends a plugin's routes, once per server. @experimental */
export interface RouteContextV1 {
  /** The host's spec semver (`1.0.0`). */
  readonly specVersion: string;
  /** The Switchyard version. */
  readonly hostVersion: string;
  /** The home the server runs on and the plugin's own folders in it (created on first use). */
  readonly paths: PluginPathsV1;
  /** Logger bound to the plugin (secrets redacted by the host). */
  readonly logger: PluginLoggerV1;
  /** Aborted when the server closes: long work a route started (an install) should stop then. */
  readonly signal: AbortSignal;
}

/** Who called a route, as far as a plugin needs to know. @experimental */
export interface RouteCallerV1 {
  /** The scopes the caller's token (or the token its web session was signed in with) carries. */
  readonly scopes: readonly RouteScopeV1[];
  /** A stable key for the caller's token (never the token itself), for per-caller state. */
  readonly key: string;
}

/** One request, validated by the route's schemas. @experimental */
export interface RouteRequestV1<
  TParams = Record<string, string>,
  TQuery = Record<string, string>,
  TBody = Record<string, unknown>,
> {
  /** Path parameters (`{jobId}` in the path), validated by `params`, else as text. */
  readonly params: TParams;
  /** Query parameters (each given once, as text), validated by `query`. */
  readonly query: TQuery;
  /** The JSON body (an object; `{}` when none was sent), validated by `body`. */
  readonly body: TBody;
  /** The caller, already authenticated and allowed the route's scope. */
  readonly caller: RouteCallerV1;
  /** Aborted when the client goes away (a long-poll should stop waiting then). */
  readonly signal: AbortSignal;
}

/**
 * One operation a plugin adds. Schemas are Standard Schema validators (a zod 4 schema is one);
 * a part without a schema must be empty (no query parameters, no body). A failed validation is
 * answered `400 invalid_request` naming the field, before `handle` runs.
 *
 * `handle` answers with the JSON value to send. To refuse, it throws an error carrying one of
 * the spec's codes (`SwitchyardError`): `invalid_input` → 400 `invalid_request`, `not_found` →
 * 404 `not_found`, `conflict` → 409 `conflict`, `provider_unavailable` → 409, `timeout`,
 * `cancelled` and `provider_error` → 502 `plugin_failed` (with the code in `details.code`);
 * anything else is a 500 `orchestration_error` and is logged.
 * @experimental
 */
export interface PluginRouteV1<TParams = any, TQuery = any, TBody = any> {
  /** `GET` reads (the cookie needs no CSRF header); `POST` changes something. */
  readonly method: "GET" | "POST";
  /**
   * Below the plugin's prefix, with `{name}` parameters: `/install-jobs/{jobId}`. Lowercase
   * `[a-z0-9-]` segments (or a parameter), starting with `/`.
   */
  readonly path: string;
  /** Unique in the plugin, `[a-zA-Z][a-zA-Z0-9]*`; the OpenAPI document prefixes the plugin. */
  readonly operationId: string;
  /** One line for the OpenAPI document. */
  readonly summary: string;
  /** More words for the OpenAPI document. */
  readonly description?: string;
  /** The scope the caller needs. */
  readonly scope: RouteScopeV1;
  /** Validates the path parameters (an object of strings). */
  readonly params?: OptionsSchemaV1<TParams>;
  /** Validates the query (an object of strings; a parameter given twice is refused). */
  readonly query?: OptionsSchemaV1<TQuery>;
  /** Validates the JSON body (an object). */
  readonly body?: OptionsSchemaV1<TBody>;
  /** The success status (default 200; 202 for work accepted and still running). */
  readonly status?: 200 | 201 | 202;
  /** Answers the request with a JSON value. */
  handle(request: RouteRequestV1<TParams, TQuery, TBody>): unknown | Promise<unknown>;
}

/**
 * What a plugin definition's `routes` is: the host calls `create` once per server, after the
 * plugins loaded, and mounts what it returns. State the routes share (running jobs) lives in
 * the closure `create` makes, so two servers in one process never share it.
 * @experimental
 */
export interface PluginRoutesV1 {
  create(context: RouteContextV1): readonly PluginRouteV1[] | Promise<readonly PluginRouteV1[]>;
}
