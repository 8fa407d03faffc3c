/**
 * The literal every spec object carries. A host refuses an object whose literal it does not
 * know, naming the provider and the version it found.
 */
export const SPECIFICATION_VERSION = "v1" as const;

/** The literal type of {@link SPECIFICATION_VERSION}. */
export type SpecificationVersion = typeof SPECIFICATION_VERSION;

/**
 * The semver of the spec this host implements. A plugin's manifest declares a range
 * (`"specVersion": "^1.0.0"`) that must contain this version before any of its code loads.
 * Minor versions only add optional fields and events; a major bump changes the literal.
 */
export const SPEC_SEMVER = "1.0.0";
