import { cpSync, existsSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join, sep } from "node:path";
import { SwitchyardError } from "../spec/index.js";
import { CORE_PACKAGE_DIR } from "../util/package-paths.js";

/**
 * The plugin templates: `templates/` of the checkout, or in an installed core (inside a
 * `node_modules`) the copy its build ships in `dist/templates` (core/scripts/pack-sdk-tarballs.mjs).
 */
export const PLUGIN_TEMPLATES_DIR = CORE_PACKAGE_DIR.split(sep).includes("node_modules")
  ? join(CORE_PACKAGE_DIR, "dist", "templates")
  : join(CORE_PACKAGE_DIR, "..", "templates");

/**
 * The shapes `switchyard plugin new` offers:
 * - `process-harness`: a harness process the plugin starts and speaks JSON-RPC to over stdio,
 *   on the sdk's harness kit (MCP grant in the environment, approvals, resume);
 * - `acp-flavor`: an ACP agent, as a flavor of the sdk's shared ACP adapter.
 */
export const PLUGIN_TEMPLATE_NAMES = ["process-harness", "acp-flavor"] as const;

/** One of {@link PLUGIN_TEMPLATE_NAMES}. */
export type PluginTemplateName = (typeof PLUGIN_TEMPLATE_NAMES)[number];

/** The template `plugin new` uses without `--template`. */
export const DEFAULT_PLUGIN_TEMPLATE: PluginTemplateName = "process-harness";

/** The Switchyard packages a new plugin builds and tests against. */
export const SDK_PACKAGE_NAMES = [
  "@switchyard/spec",
  "@switchyard/sdk",
  "@switchyard/testkit",
  "@switchyard/core",
] as const;

/**
 * Where a new plugin's `npm install` gets each Switchyard package: an npm spec per package, a
 * `file:` path to one of the running Switchyard's tarballs or a version on the registry.
 */
export type SdkPackageSpecs = Readonly<Record<(typeof SDK_PACKAGE_NAMES)[number], string>>;

/** What {@link scaffoldPlugin} needs. */
export interface ScaffoldOptions {
  /** The plugin id: its driver kind and the stem of its file names. */
  readonly id: string;
  /** The folder the plugin's own folder is created in. */
  readonly parentDir: string;
  /** The npm package name (default `switchyard-plugin-<id>`). */
  readonly packageName?: string;
  readonly template?: PluginTemplateName;
  /** Where the templates are (default {@link PLUGIN_TEMPLATES_DIR}). */
  readonly templatesDir?: string;
  /** Where `npm install` gets the Switchyard packages. */
  readonly sdkPackages: SdkPackageSpecs;
  /** The host's version: the sdk peer range a new plugin declares (`^<version>`). */
  readonly hostVersion: string;
}

/** Where a scaffold went. */
export interface ScaffoldResult {
  readonly dir: string;
  readonly packageName: string;
  readonly driverKind: string;
  readonly template: PluginTemplateName;
}

function pascal(id: string): string {
  return id
    .split(/[-_.]/)
    .filter((part) => part !== "")
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join("");
}

function camel(id: string): string {
  const name = pascal(id);
  return name[0]!.toLowerCase() + name.slice(1);
}

/**
 * A standalone tsconfig: a template's extends the repository's base, a new plugin has none. The
 * same checks as the base, so code that builds in the repository builds outside it.
 */
const STANDALONE_TSCONFIG = {
  compilerOptions: {
    target: "ES2022",
    lib: ["ES2023"],
    module: "NodeNext",
    moduleResolution: "NodeNext",
    strict: true,
    noUncheckedIndexedAccess: true,
    noImplicitOverride: true,
    skipLibCheck: true,
    declaration: true,
    sourceMap: true,
    esModuleInterop: true,
    forceConsistentCasingInFileNames: true,
    rootDir: "src",
    outDir: "dist",
    types: ["node"],
  },
  include: ["src"],
};

interface TemplatePackageJson {
  name: string;
  private?: boolean;
  peerDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  [field: string]: unknown;
}

/**
 * Copies a plugin template into `<parentDir>/<id>`, renaming the `template` driver, files and
 * identifiers to the new id, and makes it a package of its own: the Switchyard packages from
 * `sdkPackages`, a tsconfig that needs no repository. Refuses to overwrite anything.
 */
export function scaffoldPlugin(options: ScaffoldOptions): ScaffoldResult {
  const { id } = options;
  if (!/^[a-z][a-z0-9-]*$/.test(id))
    throw new SwitchyardError(
      "invalid_input",
      `"${id}" is not a valid plugin id: use lowercase letters, digits and '-', starting with a letter.`,
      { id },
    );
  if (id === "template")
    throw new SwitchyardError(
      "invalid_input",
      'Pick an id other than "template" (the templates use that word for the id).',
      { id },
    );
  const template = options.template ?? DEFAULT_PLUGIN_TEMPLATE;
  if (!(PLUGIN_TEMPLATE_NAMES as readonly string[]).includes(template)) {
    throw new SwitchyardError(
      "invalid_input",
      `There is no plugin template "${template}"; choose one of: ${PLUGIN_TEMPLATE_NAMES.join(", ")}.`,
      { template },
    );
  }
  const templateDir = join(options.templatesDir ?? PLUGIN_TEMPLATES_DIR, template);
  if (!existsSync(join(templateDir, "package.json")))
    throw new SwitchyardError(
      "not_found",
      `The plugin template "${template}" is missing at ${templateDir}; reinstall Switchyard.`,
      { templateDir },
    );
  const dir = join(options.parentDir, id);
  if (existsSync(dir))
    throw new SwitchyardError("conflict", `${dir} already exists; choose another id or folder.`, { dir });
  const templateName = (JSON.parse(readFileSync(join(templateDir, "package.json"), "utf8")) as TemplatePackageJson)
    .name;
  const packageName = options.packageName ?? `switchyard-plugin-${id}`;
  cpSync(templateDir, dir, {
    recursive: true,
    filter: (source) => !/(^|\/)(dist|node_modules)(\/|$)/.test(source.slice(templateDir.length)),
  });
  // The template's package name contains the word the id replaces, and the new name may too:
  // it stands aside as a placeholder while the id goes in.
  const placeholder = "\u0000package-name\u0000";
  const rename = (text: string) =>
    text
      .replaceAll(templateName, placeholder)
      .replaceAll("Template", pascal(id))
      .replaceAll("TEMPLATE", id.replace(/-/g, "_").toUpperCase())
      // An identifier (`templateDriver`) takes the id in camel case, everything else as it is.
      .replace(/template(?=[A-Z])/g, camel(id))
      .replaceAll("template", id)
      .replaceAll(placeholder, packageName);
  const visit = (folder: string) => {
    for (const entry of readdirSync(folder)) {
      const path = join(folder, entry);
      if (statSync(path).isDirectory()) {
        visit(path);
        continue;
      }
      writeFileSync(path, rename(readFileSync(path, "utf8")));
      const renamed = rename(entry);
      if (renamed !== entry) renameSync(path, join(folder, renamed));
    }
  };
  visit(dir);
  const pkgFile = join(dir, "package.json");
  const pkg = JSON.parse(readFileSync(pkgFile, "utf8")) as TemplatePackageJson;
  delete pkg.private;
  pkg.peerDependencies = { ...pkg.peerDependencies, "@switchyard/sdk": `^${options.hostVersion}` };
  // The testkit runs the plugin inside a real host (its peer, core) for the conformance suite;
  // typescript and vitest stay pinned as the template has them, so `npx tsc` and `npx vitest`
  // always run these and never fetch a package of that name.
  pkg.devDependencies = { ...pkg.devDependencies, ...options.sdkPackages };
  writeFileSync(pkgFile, `${JSON.stringify(pkg, null, 2)}\n`);
  writeFileSync(join(dir, "tsconfig.json"), `${JSON.stringify(STANDALONE_TSCONFIG, null, 2)}\n`);
  return { dir, packageName, driverKind: id, template };
}
