import { copyFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import { runCli } from "./cli.js";
import { writeOfflineLockfile } from "./offline-project.js";

// What a plugin author outside the repository runs, as they would run it: the build step that
// packs this Switchyard's tarballs, `npm install` offline, `npm run build`, `npm test` with the
// project's own vitest. Shared by the e2e tests of each template (core/test/e2e/plugin-author*).

export const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/** `switchyard plugin sdk-path --json`. */
export interface SdkPath {
  readonly hostVersion: string;
  readonly packages: readonly { readonly name: string; readonly path: string }[];
}

/** The JSON report of a vitest run. */
export interface VitestReport {
  readonly success: boolean;
  readonly testResults: readonly {
    readonly name: string;
    /** Why the file failed outside any test (a hook, an import). */
    readonly message?: string;
    readonly assertionResults: readonly {
      readonly ancestorTitles: readonly string[];
      readonly title: string;
      readonly status: string;
      readonly failureMessages?: readonly string[];
    }[];
  }[];
}

/**
 * The environment a user's shell has: none of the variables npm and vitest set for this test
 * process (an inner vitest must not think it runs inside this one), never the network for npm.
 * NODE_OPTIONS stays, as it would in the user's shell: CI's Node 22 step preloads its
 * better-sqlite3 build through it (ci/node22), and the plugin's own tests start a host too.
 */
export function userEnv(): Record<string, string> {
  const inherited = Object.entries(process.env).filter(([key]) => !/^(npm_|VITEST|NODE_ENV$)/i.test(key));
  return {
    ...Object.fromEntries(inherited as [string, string][]),
    npm_config_offline: "true",
    npm_config_audit: "false",
    npm_config_fund: "false",
    npm_config_update_notifier: "false",
  };
}

/** `npm <args>` in `cwd`, as the user runs it (never throws on a non-zero exit). */
export function npm(args: string[], cwd: string, timeout = 300_000) {
  return execa("npm", args, {
    cwd,
    env: { ...userEnv(), npm_config_loglevel: "error" },
    extendEnv: false,
    reject: false,
    timeout,
    stdin: "ignore",
  });
}

/** The build step that packs the tarballs (it skips packages whose files did not change), then `plugin sdk-path`. */
export async function packSdkTarballs(): Promise<SdkPath> {
  await execa(process.execPath, [join(ROOT, "core", "scripts", "pack-sdk-tarballs.mjs")], { timeout: 300_000 });
  return JSON.parse((await runCli(["plugin", "sdk-path", "--json"])).stdout) as SdkPath;
}

/**
 * `npm install` in a scaffolded plugin. npm's cache here has the tarballs of every third-party
 * package but no registry metadata, so the project gets the lockfile a first online install
 * would write (support/offline-project.ts), and npm installs from the cache. Scripts are skipped
 * only because better-sqlite3's fetches a prebuilt binary from GitHub: the checkout's binary of
 * the same version takes its place. Returns npm's outcome; throws when the binary does not fit.
 */
export async function installOffline(dir: string) {
  await writeOfflineLockfile(dir);
  const installed = await npm(["install", "--offline", "--ignore-scripts"], dir);
  if (installed.exitCode !== 0) return installed;
  const sqlite = join("node_modules", "better-sqlite3");
  const version = (at: string) =>
    (JSON.parse(readFileSync(join(at, sqlite, "package.json"), "utf8")) as { version: string }).version;
  if (version(dir) !== version(ROOT))
    throw new Error(
      `${dir} installed better-sqlite3 ${version(dir)}, the checkout has ${version(ROOT)}: its binary does not fit`,
    );
  mkdirSync(join(dir, sqlite, "build", "Release"), { recursive: true });
  copyFileSync(
    join(ROOT, sqlite, "build", "Release", "better_sqlite3.node"),
    join(dir, sqlite, "build", "Release", "better_sqlite3.node"),
  );
  return installed;
}

/** `npm test` in the plugin, with vitest's JSON report: which tests did not pass, and the conformance file's cases. */
export async function testPlugin(dir: string, id: string) {
  const report = join(dir, "vitest-report.json");
  const tested = await npm(["test", "--", "--reporter=json", `--outputFile=${report}`], dir, 300_000);
  if (!existsSync(report))
    throw new Error(`npm test wrote no report:\n${tested.stdout}\n${tested.stderr}`.slice(-4_000));
  const results = JSON.parse(readFileSync(report, "utf8")) as VitestReport;
  const notPassed = results.testResults.flatMap((file) =>
    file.assertionResults
      .filter((test) => test.status !== "passed")
      .map((test) => `${test.ancestorTitles.join(" > ")} > ${test.title}: ${test.status}`),
  );
  // What went wrong, for the assertion's message: a file's own failure, then the tests'.
  const why = results.testResults
    .flatMap((file) => [file.message ?? "", ...file.assertionResults.flatMap((test) => test.failureMessages ?? [])])
    .filter((text) => text !== "");
  const conformance =
    results.testResults.find((file) => file.name.endsWith(join("test", `${id}.conformance.test.ts`)))
      ?.assertionResults ?? [];
  return {
    exitCode: tested.exitCode,
    failures: `${why.join("\n").slice(0, 4_000)}\n${tested.stderr.slice(-2_000)}`,
    notPassed,
    conformance,
  };
}
