// The layering of docs/architecture.md ("Layering, checked"), held by dependency-cruiser:
// `npm run lint:deps` (part of `npm run lint`, which CI runs). That section lists these rules by
// name; change both together. core/test/layering.test.ts shows each wrong-way import failing.

// core/src, bottom to top. A folder imports only folders below it (and its own).
// - foundation: spec (the re-export of @switchyard/spec), util (with the DI token type), config,
//   logging.
// - store, plugin-host: beside each other, neither imports the other.
// - policy: pure decisions over projections (store records) and capabilities (spec).
// - engine.
// - services, providers: beside each other above the engine (providers implement the engine's
//   ProviderCatalog port), neither imports the other.
// - host: the composition root (composition-root.ts, the catalogue of tokens) and the host's
//   life cycle: everything below the transports.
// - contract: each operation's input and output schemas and the shaping of a service result
//   into its answer, over the services' types and the foundation (and the engine's failure type
//   for a refused input). Beside the host; it never imports a transport.
// - transports (mcp, http): the contract, services and the foundation, the host handed to them,
//   and of the engine only its failure type. Neither transport imports the other: both adapt
//   the contract (the server that mounts both, http/switchyard-server.ts, excepted).
// - cli, index.ts: the entry points, anything in core.
// Each DI token is declared beside the port it names (store/ports.ts, engine/ports.ts...), so a
// layer that injects one imports the floor that owns the port, never a floor above it.
const FOUNDATION = ["spec", "util", "config", "logging"];
const LAYERED = [
  "store",
  "plugin-host",
  "policy",
  "engine",
  "services",
  "providers",
  "host",
  "contract",
  "transports",
  "connect",
];
const ENTRY_POINTS = ["cli"];
/** The floors under the services: what the services and the host are built on. */
const BELOW_SERVICES = [...FOUNDATION, "store", "plugin-host", "policy", "engine", "providers"];

/** A rule that core/src/<from> imports from core/src only the folders in `allowed` (and itself). */
function layer(name, from, allowed, comment) {
  const folders = [...new Set([...from, ...allowed])];
  return {
    name,
    severity: "error",
    comment,
    from: { path: `^core/src/(${from.join("|")})/` },
    to: {
      path: "^core/src/",
      pathNot: `^core/src/(${folders.join("|")})/`,
    },
  };
}

const PLUGIN = "^(plugins/[^/]+|templates/[^/]+)/";
const PLUGIN_TEST = "^(plugins/[^/]+|templates/[^/]+)/test/";

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "No import cycle anywhere, type-only imports included: a cycle makes two modules one.",
      from: {},
      to: { circular: true },
    },
    {
      name: "import-resolves",
      severity: "error",
      comment:
        "Every relative or workspace import resolves. A workspace package export that does not resolve is missing from tsconfig.dependency-cruiser.json (its paths map each export to its source).",
      from: {},
      to: { couldNotResolve: true },
    },

    // --- The spec package, the sdk, the testkit, registry-cache --------------------------------
    {
      name: "spec-imports-nothing",
      severity: "error",
      comment: "@switchyard/spec has no dependencies: nothing outside spec/src but node's built-in types.",
      from: { path: "^spec/src/" },
      to: { pathNot: "^spec/src/", dependencyTypesNot: ["core"] },
    },
    {
      name: "spec-uses-node-only-for-types",
      severity: "error",
      comment: "@switchyard/spec runs nowhere on its own: node built-ins only as types.",
      from: { path: "^spec/src/" },
      to: { dependencyTypes: ["core"], dependencyTypesNot: ["type-only"] },
    },
    {
      name: "sdk-imports-no-core-or-testkit",
      severity: "error",
      comment: "The sdk depends on the spec and the ACP SDK only, so a plugin installs nothing of the host.",
      from: { path: "^sdk/src/" },
      to: { path: "^(core|testkit|registry-cache|plugins|templates)/" },
    },
    {
      name: "testkit-imports-no-plugin",
      severity: "error",
      comment: "The testkit may use core, the sdk and the spec; plugins use it, never the other way.",
      from: { path: "^testkit/src/" },
      to: { path: "^(plugins|templates|registry-cache)/" },
    },
    {
      name: "registry-cache-stands-alone",
      severity: "error",
      comment: "registry-cache is a library of the acp-registry plugin and imports no Switchyard package.",
      from: { path: "^registry-cache/src/" },
      to: { path: "^(spec|core|sdk|testkit|plugins|templates)/" },
    },

    // --- Plugins (plugins/*, templates/*) -----------------------------------------------------
    {
      name: "plugin-imports-no-core",
      severity: "error",
      comment:
        "A plugin imports the sdk (and the spec), never @switchyard/core: the host hands it a context. Its tests use the testkit, and host-level tests core's test helpers (core/test/support).",
      from: { path: PLUGIN },
      to: { path: "^core/", pathNot: "^core/test/support/" },
    },
    {
      name: "plugin-imports-no-other-plugin",
      severity: "error",
      comment: "Plugins are shipped separately: one never imports another.",
      from: { path: PLUGIN },
      to: { path: "^(plugins|templates)/", pathNot: "^$1/" },
    },
    {
      name: "plugin-stays-in-its-folder",
      severity: "error",
      comment: "No relative import out of the plugin's folder: what a plugin uses comes from packages it declares.",
      from: { path: PLUGIN, pathNot: PLUGIN_TEST },
      to: { dependencyTypes: ["local"], dependencyTypesNot: ["aliased"], pathNot: "^$1/" },
    },
    {
      name: "plugin-test-stays-in-its-folder",
      severity: "error",
      comment:
        "A plugin's tests import relatively only their own plugin and core's test helpers (core/test/support: running the built CLI, an engine in a child process).",
      from: { path: PLUGIN_TEST },
      to: { dependencyTypes: ["local"], dependencyTypesNot: ["aliased"], pathNot: ["^$1/", "^core/test/support/"] },
    },
    {
      name: "plugin-source-imports-only-spec-sdk-or-a-library",
      severity: "error",
      comment:
        "What a plugin ships imports, of the workspace packages, the spec, the sdk and libraries (registry-cache); the testkit is for its tests.",
      from: { path: `${PLUGIN}src/` },
      to: { dependencyTypes: ["aliased"], pathNot: "^(spec|sdk|registry-cache)/src/" },
    },
    {
      name: "plugin-declares-what-it-imports",
      severity: "error",
      comment:
        "A plugin's source imports only packages its own package.json ships with (dependencies, peer dependencies; not devDependencies). A harness library the user installs is an optional peer and, for this repository's tests, a devDependency too: the peer is what counts.",
      from: { path: `${PLUGIN}src/` },
      to: { dependencyTypes: ["npm-no-pkg", "npm-unknown", "npm-dev"], dependencyTypesNot: ["npm-peer"] },
    },

    // --- core --------------------------------------------------------------------------------
    {
      name: "core-imports-no-plugin",
      severity: "error",
      comment: "Nothing in core imports a plugin: plugins load at run time through the plugin host.",
      from: { path: "^core/src/" },
      to: { path: "^(plugins|templates|registry-cache)/" },
    },
    {
      name: "core-imports-no-sdk-or-testkit",
      severity: "error",
      comment: "Core depends on @switchyard/spec only; `switchyard demo` reaches the testkit by a run-time import.",
      from: { path: "^core/src/" },
      to: { path: "^(sdk|testkit)/" },
    },
    {
      name: "sqlite-driver-only-in-the-store",
      severity: "error",
      comment:
        "The SQLite driver is the store's own (core/src/store): everything else reads and writes through the store's port, so a second backend can stand in for it.",
      from: { path: "^core/src/", pathNot: "^core/src/store/" },
      to: { path: "node_modules/better-sqlite3/" },
    },
    {
      name: "pg-only-in-the-postgres-store",
      severity: "error",
      comment:
        "The PostgreSQL driver (pg) stays in core/src/store/postgres: everything else reaches the database through the store, and a SQLite-only install never loads it (issue 34).",
      from: { path: "^core/src/", pathNot: "^core/src/store/postgres/" },
      to: { path: "(^|/)node_modules/(pg|pg-[^/]+|@types/pg)/" },
    },
    {
      name: "core-spec-only-re-exports",
      severity: "error",
      comment: "core/src/spec re-exports @switchyard/spec and nothing else.",
      from: { path: "^core/src/spec/" },
      to: { pathNot: "^(spec/src|core/src/spec)/" },
    },
    {
      name: "core-folder-has-a-layer",
      severity: "error",
      comment:
        "Every folder of core/src has its place in these rules (and in docs/architecture.md); a new one gets it here first.",
      from: {
        path: "^core/src/",
        pathNot: [`^core/src/(${[...FOUNDATION, ...LAYERED, ...ENTRY_POINTS].join("|")})/`, "^core/src/index\\.ts$"],
      },
      to: {},
    },
    layer(
      "foundation-imports-only-foundation",
      FOUNDATION,
      FOUNDATION,
      "spec, util, config and logging sit at the bottom of core.",
    ),
    {
      name: "nothing-below-services-imports-services-or-host",
      severity: "error",
      comment:
        "No arrow runs back up into the services or the composition root: a token is declared beside its port, so the store, the plugin host, the policy, the engine and the providers never reach host/ (or services/) for one.",
      from: { path: `^core/src/(${BELOW_SERVICES.join("|")})/` },
      to: { path: "^core/src/(services|host|transports|connect|cli)/" },
    },
    layer("store-imports-only-below", ["store"], FOUNDATION, "The store sits on the foundation."),
    layer(
      "plugin-host-imports-only-below",
      ["plugin-host"],
      FOUNDATION,
      "The plugin host sits on the foundation, beside the store.",
    ),
    layer(
      "policy-imports-only-below",
      ["policy"],
      [...FOUNDATION, "store"],
      "The policy decides over projections (store records) and capabilities (spec).",
    ),
    layer(
      "engine-imports-only-below",
      ["engine"],
      [...FOUNDATION, "store", "plugin-host", "policy"],
      "The engine sits on the store, the plugin host and the policy.",
    ),
    layer(
      "services-import-only-below",
      ["services"],
      [...FOUNDATION, "store", "policy", "engine"],
      "Services sit on the engine; they reach providers through the engine's ProviderCatalog port.",
    ),
    layer(
      "providers-import-only-below",
      ["providers"],
      [...FOUNDATION, "plugin-host", "engine"],
      "The provider registry implements the engine's ProviderCatalog port over the plugin host's drivers.",
    ),
    layer(
      "host-imports-no-transport",
      ["host"],
      [...BELOW_SERVICES, "services"],
      "host/ is the composition root: it registers everything below the transports (the services the transports call included); transports and the CLI are handed a host.",
    ),
    layer(
      "contract-imports-services-not-transports",
      ["contract"],
      [...FOUNDATION, "services", "engine"],
      "The contract (each operation's schemas and result shaping) is transport-neutral: it sits on the services' types, and both transports adapt it.",
    ),
    {
      name: "contract-uses-only-the-engine-failure-type",
      severity: "error",
      comment:
        "Of the engine the contract uses only OrchestratorFailure, the typed refusal of an input the schema alone cannot rule out.",
      from: { path: "^core/src/contract/" },
      to: { path: "^core/src/engine/", pathNot: "^core/src/engine/orchestrator-failure\\.ts$" },
    },
    layer(
      "transports-import-services-not-internals",
      ["transports"],
      [...FOUNDATION, "contract", "services", "host", "engine"],
      "A transport authenticates, resolves inputs, calls the services and shapes responses with the contract (seed 000).",
    ),
    {
      name: "http-imports-no-mcp",
      severity: "error",
      comment:
        "The HTTP API takes its schemas and result shaping from the contract, never from the MCP tools. Only the server that mounts both endpoints (server-endpoints.ts builds them, switchyard-server.ts binds them) imports the MCP endpoint.",
      from: {
        path: "^core/src/transports/http/",
        pathNot: "^core/src/transports/http/(switchyard-server|server-endpoints)\\.ts$",
      },
      to: { path: "^core/src/transports/mcp/" },
    },
    {
      name: "mcp-imports-no-http",
      severity: "error",
      comment:
        "The MCP tools take their schemas and result shaping from the contract; what both transports share (the request body reader, the caller from a scope) lives in transports/ itself.",
      from: { path: "^core/src/transports/mcp/" },
      to: { path: "^core/src/transports/http/" },
    },
    layer(
      "connect-imports-services-not-internals",
      ["connect"],
      [...FOUNDATION, "services", "host"],
      "`switchyard connect` (used by the CLI only) writes harness configs and checks them against a running server, over the services and the composition's paths, like a transport.",
    ),
    {
      name: "transports-use-only-the-engine-failure-type",
      severity: "error",
      comment: "Of the engine a transport uses only OrchestratorFailure, the typed denial it shapes into a response.",
      from: { path: "^core/src/transports/" },
      to: { path: "^core/src/engine/", pathNot: "^core/src/engine/orchestrator-failure\\.ts$" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)dist/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.dependency-cruiser.json" },
    combinedDependencies: false,
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "types", "default"],
      mainFields: ["types", "main"],
    },
    skipAnalysisNotInRules: true,
  },
};
