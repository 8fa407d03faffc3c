import semver from "semver";

/**
 * npx and uvx entries have no checksum: their integrity rests on the pinned version (npm and
 * uv verify the package's own hashes from their registries). A range or a tag would let the
 * code behind an agent id change without the index changing, so only exact versions pass.
 */

/** An npm package pinned to one exact version. */
export interface NpmPackageSpec {
  readonly name: string;
  readonly version: string;
  /** `name@version`, the form `npm install` takes. */
  readonly spec: string;
}

/** A Python package pinned to one exact version. */
export interface PythonPackageSpec {
  readonly name: string;
  /** Extras such as `[server]`, kept verbatim for the install spec. */
  readonly extras: string;
  readonly version: string;
  /** `name[extras]==version`, the form `uv tool install` takes. */
  readonly spec: string;
}

/** Why a package string was rejected; the schema and the installers word it for their context. */
export type PackageSpecProblem = string;

const NPM_NAME = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/;

export function parseNpmPackageSpec(raw: string): NpmPackageSpec | PackageSpecProblem {
  // The version separator is the last "@" that is not the scope's leading one.
  const at = raw.lastIndexOf("@");
  if (at <= 0) return `"${raw}" has no version; write it as name@1.2.3`;
  const name = raw.slice(0, at);
  const version = raw.slice(at + 1);
  if (!NPM_NAME.test(name) || name.length > 214) return `"${name}" is not a valid npm package name`;
  if (semver.valid(version) !== version) {
    return `"${version}" is not an exact version (ranges and tags such as "latest" are refused); pin it as ${name}@1.2.3`;
  }
  return { name, version, spec: `${name}@${version}` };
}

const PYTHON_NAME = /^([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)(\[[A-Za-z0-9._,\s-]+\])?$/;
// PEP 440 public versions plus a local label; anything with an operator or wildcard is a range.
const PYTHON_EXACT_VERSION =
  /^(?:\d+!)?\d+(?:\.\d+)*(?:(?:a|b|rc)\d+)?(?:\.post\d+)?(?:\.dev\d+)?(?:\+[A-Za-z0-9.]+)?$/i;

export function parsePythonPackageSpec(raw: string): PythonPackageSpec | PackageSpecProblem {
  let namePart: string;
  let version: string;
  const eq = raw.indexOf("==");
  if (eq > 0) {
    namePart = raw.slice(0, eq).trim();
    version = raw.slice(eq + 2).trim();
  } else {
    const at = raw.lastIndexOf("@");
    if (at <= 0) return `"${raw}" has no version; write it as name==1.2.3`;
    namePart = raw.slice(0, at).trim();
    version = raw.slice(at + 1).trim();
  }
  const match = PYTHON_NAME.exec(namePart);
  if (match === null || match[1] === undefined) return `"${namePart}" is not a valid Python package name`;
  if (!PYTHON_EXACT_VERSION.test(version)) {
    return `"${version}" is not an exact version (specifiers such as ">=1.0" are refused); pin it as ${match[1]}==1.2.3`;
  }
  const name = match[1];
  const extras = match[2] ?? "";
  return { name, extras, version, spec: `${name}${extras}==${version}` };
}

export function isPackageSpecProblem<T extends object>(value: T | PackageSpecProblem): value is PackageSpecProblem {
  return typeof value === "string";
}
