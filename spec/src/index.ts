/**
 * @switchyard/spec: the contract between the Switchyard host and provider plugins. Types,
 * the capability decoder, typed errors and a few helpers; no runtime dependencies, so a plugin
 * that imports it pulls in nothing else.
 *
 * Every interface carries its spec version in its name (`OrchestrationAdapterV1`); the names
 * without a version (`OrchestrationAdapter`) are aliases of the current version. Every export's
 * TSDoc carries a release tag: `@public` (changes only with the spec's semver) or
 * `@experimental` (may still change in a spec minor); docs/releasing.md, "Release tags".
 */
export * from "./version.js";
export * from "./modes.js";
export * from "./errors.js";
export * from "./stderr-tail.js";
export * from "./v1/index.js";
export * from "./current.js";
