import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import { afterAll, describe, expect, it } from "vitest";

// docs/releasing.md's versioning policy as the release tooling applies it: every published
// @switchyard package in lockstep, naming the others by that exact version (plugins name the sdk
// with a caret range), the private web UI left alone, and the MIT licence in every tarball.

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CHANGESET_BIN = join(ROOT, "node_modules", "@changesets", "cli", "bin.js");

interface Manifest {
  name: string;
  version: string;
  private?: boolean;
  license?: string;
  workspaces?: string[];
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

const manifestAt = (dir: string) => JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Manifest;

/** Every workspace folder the root package.json names, relative to `root` (`plugins/*` expanded). */
function workspaceDirs(root: string): string[] {
  return (manifestAt(root).workspaces ?? []).flatMap((pattern) =>
    pattern.endsWith("/*")
      ? readdirSync(join(root, pattern.slice(0, -2)), { withFileTypes: true })
          .filter(
            (entry) => entry.isDirectory() && existsSync(join(root, pattern.slice(0, -2), entry.name, "package.json")),
          )
          .map((entry) => `${pattern.slice(0, -2)}/${entry.name}`)
      : [pattern],
  );
}

const WORKSPACES = workspaceDirs(ROOT);
const PUBLISHED = WORKSPACES.filter((dir) => manifestAt(join(ROOT, dir)).private !== true);

/** Each `@switchyard/*` package a manifest names, with the range it names it by. */
function internalReferences(manifest: Manifest): [string, string][] {
  return [manifest.dependencies, manifest.devDependencies, manifest.peerDependencies].flatMap((field) =>
    Object.entries(field ?? {}).filter(([name]) => name.startsWith("@switchyard/")),
  );
}

const nextMinor = (version: string) => {
  const [major, minor] = version.split(".");
  return `${major}.${Number(minor) + 1}.0`;
};

describe("releasing", () => {
  const scratch: string[] = [];
  afterAll(() => {
    for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
  });

  it("finds the published packages: spec, sdk, core, testkit, registry-cache, every plugin, the CLI", () => {
    expect(PUBLISHED).toEqual(
      expect.arrayContaining(["spec", "sdk", "core", "testkit", "registry-cache", "plugins/codex", "cli"]),
    );
    expect(PUBLISHED).not.toContain("web");
  });

  it("ships the root LICENSE, the MIT licence every package.json declares, in every published package", () => {
    const licence = readFileSync(join(ROOT, "LICENSE"), "utf8");
    expect(licence).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} Switchyard contributors\n/);
    for (const dir of PUBLISHED) {
      expect(manifestAt(join(ROOT, dir)).license, dir).toBe("MIT");
      // npm packs a package's own LICENSE whatever its `files` say; the root's is not in its tarball.
      expect(
        existsSync(join(ROOT, dir, "LICENSE")) && readFileSync(join(ROOT, dir, "LICENSE"), "utf8") === licence,
        `${dir}/LICENSE is the root's`,
      ).toBe(true);
    }
  });

  it("a changeset naming one package moves every published package to the same version, references included", async () => {
    const versions = new Set(PUBLISHED.map((dir) => manifestAt(join(ROOT, dir)).version));
    expect([...versions], "the packages start in lockstep").toHaveLength(1);
    const current = [...versions][0]!;
    const next = nextMinor(current);

    // `changeset version` on a copy of the manifests, with the repository's own config and tools.
    const copy = mkdtempSync(join(tmpdir(), "switchyard-release-"));
    scratch.push(copy);
    for (const file of ["package.json", "package-lock.json", ".changeset/config.json"]) {
      mkdirSync(join(copy, file, ".."), { recursive: true });
      writeFileSync(join(copy, file), readFileSync(join(ROOT, file)));
    }
    for (const dir of WORKSPACES) {
      mkdirSync(join(copy, dir), { recursive: true });
      writeFileSync(join(copy, dir, "package.json"), readFileSync(join(ROOT, dir, "package.json")));
    }
    symlinkSync(join(ROOT, "node_modules"), join(copy, "node_modules"), "dir");
    writeFileSync(
      join(copy, ".changeset", "sdk-helper.md"),
      `---\n"@switchyard/sdk": minor\n---\n\nA new harness-kit helper.\n`,
    );

    const result = await execa(process.execPath, [CHANGESET_BIN, "version"], {
      cwd: copy,
      reject: false,
      timeout: 60_000,
      env: { CI: "true" },
    });
    expect(result.exitCode, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(existsSync(join(copy, ".changeset", "sdk-helper.md")), "the changeset is used up").toBe(false);

    for (const dir of PUBLISHED) {
      const manifest = manifestAt(join(copy, dir));
      expect(manifest.version, dir).toBe(next);
      for (const [name, range] of internalReferences(manifest)) {
        // Exact versions between packages; a plugin's peer range on the sdk is a caret on it.
        expect(range, `${dir} → ${name}`).toBe(range.startsWith("^") ? `^${next}` : next);
      }
      expect(readFileSync(join(copy, dir, "CHANGELOG.md"), "utf8"), `${dir}/CHANGELOG.md`).toContain(`## ${next}`);
    }
    expect(readFileSync(join(copy, "sdk", "CHANGELOG.md"), "utf8")).toContain("A new harness-kit helper.");
    for (const dir of WORKSPACES.filter((dir) => !PUBLISHED.includes(dir))) {
      expect(manifestAt(join(copy, dir)).version, `${dir} is private: never versioned`).toBe(
        manifestAt(join(ROOT, dir)).version,
      );
    }
  });
});
