import { cpSync, existsSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SwitchyardError } from "../spec/index.js";
import { CORE_PACKAGE_DIR } from "../util/package-paths.js";

/** The plugin template: `<repository>/templates/plugin`. */
export const PLUGIN_TEMPLATE_DIR = join(CORE_PACKAGE_DIR, "..", "templates", "plugin");

/** Where a scaffold went. */
export interface ScaffoldResult {
  readonly dir: string;
  readonly packageName: string;
  readonly driverKind: string;
}

function pascal(id: string): string {
  return id
    .split(/[-_.]/)
    .filter((part) => part !== "")
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join("");
}

/** A standalone tsconfig: the template's extends the repository's base, a new plugin has none. */
const STANDALONE_TSCONFIG = {
  compilerOptions: {
    target: "ES2022",
    lib: ["ES2023"],
    module: "NodeNext",
    moduleResolution: "NodeNext",
    strict: true,
    skipLibCheck: true,
    declaration: true,
    sourceMap: true,
    rootDir: "src",
    outDir: "dist",
    types: ["node"],
  },
  include: ["src"],
};

/**
 * Copies the plugin template into `<parentDir>/<id>`, renaming the `template` driver, files
 * and identifiers to the new id. Refuses to overwrite anything.
 */
export function scaffoldPlugin(options: { id: string; parentDir: string; packageName?: string; templateDir?: string }): ScaffoldResult {
  const { id } = options;
  if (!/^[a-z][a-z0-9-]*$/.test(id)) throw new SwitchyardError("invalid_input", `"${id}" is not a valid plugin id: use lowercase letters, digits and '-', starting with a letter.`);
  if (id === "template") throw new SwitchyardError("invalid_input", 'Pick an id other than "template".');
  const templateDir = options.templateDir ?? PLUGIN_TEMPLATE_DIR;
  if (!existsSync(templateDir)) throw new SwitchyardError("not_found", `The plugin template is missing at ${templateDir}; reinstall Switchyard.`);
  const dir = join(options.parentDir, id);
  if (existsSync(dir)) throw new SwitchyardError("conflict", `${dir} already exists; choose another id or folder.`);
  const packageName = options.packageName ?? `switchyard-plugin-${id}`;
  cpSync(templateDir, dir, {
    recursive: true,
    filter: (source) => !/(^|\/)(dist|node_modules)(\/|$)/.test(source.slice(templateDir.length)),
  });
  const rename = (text: string) =>
    text
      .replaceAll("@switchyard/plugin-template", packageName)
      .replaceAll("Template", pascal(id))
      .replaceAll("TEMPLATE", id.replace(/-/g, "_").toUpperCase())
      .replaceAll("template", id);
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
  const pkg = JSON.parse(readFileSync(pkgFile, "utf8")) as Record<string, unknown>;
  delete pkg.private;
  // The testkit runs the plugin inside a real host (its peer, core) for the conformance suite.
  pkg.devDependencies = { "@switchyard/sdk": "^0.1.0", "@switchyard/testkit": "^0.1.0", "@switchyard/core": "^0.1.0", typescript: "5.9.3", vitest: "4.1.12", "@types/node": "^20.19.0" };
  writeFileSync(pkgFile, `${JSON.stringify(pkg, null, 2)}\n`);
  writeFileSync(join(dir, "tsconfig.json"), `${JSON.stringify(STANDALONE_TSCONFIG, null, 2)}\n`);
  return { dir, packageName, driverKind: id };
}
