/**
 * The literal every spec object carries. A host refuses an object whose literal it does not
 * know, naming the provider and the version it found.
 * @public
 */
export const SPECIFICATION_VERSION = "v1" as const;

/** The literal type of {@link SPECIFICATION_VERSION}. @public */
export type SpecificationVersion = typeof SPECIFICATION_VERSION;

/**
 * The semver of the spec this package describes (and a host built on it implements). A
 * plugin's manifest declares a range inside one major (`"specVersion": "^1.0.0"`) that must
 * contain the host's version before any of its code loads. Minor versions only add optional
 * fields, events and commands, or change an export tagged `@experimental`; a major bump changes
 * the literal (`v2`) and the type names.
 * Independent of the npm package version, which moves in lockstep with the other
 * `@switchyard/*` packages.
 * @public
 */
export const SPEC_SEMVER = "1.0.0";
