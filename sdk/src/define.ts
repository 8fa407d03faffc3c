import {
  SPECIFICATION_VERSION,
  type CommandGroup,
  type OptionsSchemaV1,
  type PluginDefinition,
  type PluginRoute,
  type PluginRoutes,
  type ProviderDriver,
  type RouteRequest,
} from "@switchyard/spec";

/** Declares a driver; fills in the spec literal so authors cannot get it wrong. @public */
export function defineDriver<TOptions>(
  driver: Omit<ProviderDriver<TOptions>, "specificationVersion">,
): ProviderDriver<TOptions> {
  return { specificationVersion: SPECIFICATION_VERSION, ...driver };
}

/**
 * Declares a command group a plugin adds to `switchyard` (`switchyard <name> <command> …`).
 * List its name in the manifest's `commands` too, so the CLI shows it without loading the plugin.
 * @public
 */
export function defineCommandGroup(group: CommandGroup): CommandGroup {
  return group;
}

/**
 * Declares one HTTP API operation, with `handle`'s request typed by its schemas (zod 4
 * schemas work as they are): `defineRoute({ method: "GET", path: "/agents", scope:
 * "orchestration:read", query: z.object({ q: z.string().optional() }), handle: ({ query }) => … })`.
 * @experimental
 */
export function defineRoute<
  TParams = Record<string, string>,
  TQuery = Record<string, never>,
  TBody = Record<string, never>,
>(
  route: Omit<PluginRoute<TParams, TQuery, TBody>, "params" | "query" | "body" | "handle"> & {
    readonly params?: OptionsSchemaV1<TParams>;
    readonly query?: OptionsSchemaV1<TQuery>;
    readonly body?: OptionsSchemaV1<TBody>;
    handle(request: RouteRequest<TParams, TQuery, TBody>): unknown | Promise<unknown>;
  },
): PluginRoute<TParams, TQuery, TBody> {
  return route;
}

/**
 * Declares the HTTP API operations a plugin adds (mounted under `/api/v1/plugins/<plugin>/`):
 * `create` runs once per server with the host's services and returns the routes.
 * @experimental
 */
export function defineRoutes(routes: PluginRoutes): PluginRoutes {
  return routes;
}

/** Declares a plugin: the value its entry module exports as `default`. @public */
export function definePlugin(plugin: {
  readonly drivers?: readonly ProviderDriver<any>[];
  readonly commands?: readonly CommandGroup[];
  readonly routes?: PluginRoutes;
}): PluginDefinition {
  return {
    specificationVersion: SPECIFICATION_VERSION,
    drivers: plugin.drivers ?? [],
    ...(plugin.commands !== undefined ? { commands: plugin.commands } : {}),
    ...(plugin.routes !== undefined ? { routes: plugin.routes } : {}),
  };
}
