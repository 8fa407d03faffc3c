import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// What `switchyard providers` says about harnesses that are missing or outside the versions a
// plugin was tested with, through the checkout's `switchyard` launcher and its real plugins.
// The out-of-range harnesses are small executables that answer `--version` as the real ones do;
// nothing else of theirs runs in an inspect probe.

const LAUNCHER = fileURLToPath(new URL("../bin/switchyard.js", import.meta.url));

interface Listed {
  readonly id: string;
  readonly available: boolean;
  readonly reason: string | null;
  readonly warnings: readonly string[];
  readonly harness: {
    readonly searched: readonly { readonly source: string; readonly what: string; readonly found: string | null }[];
    readonly inTestedRange: boolean | null;
    readonly install: string;
  } | null;
}

let scratch: string;
let fakes: string;

function fake(name: string, versionLine: string): string {
  const file = join(fakes, name);
  writeFileSync(file, `#!/bin/sh\necho '${versionLine}'\n`);
  chmodSync(file, 0o755);
  return file;
}

async function providers(config: Record<string, unknown>, path: string): Promise<Listed[]> {
  const home = mkdtempSync(join(scratch, "home-"));
  writeFileSync(join(home, "config.json"), JSON.stringify(config));
  // A HOME and PATH of the test's own: no ~/.npmrc prefix, no harness of this machine's.
  const result = await execa(process.execPath, [LAUNCHER, "providers", "--json", "--home", home], {
    env: { PATH: path, HOME: home },
    extendEnv: false,
    reject: false,
  });
  expect(result.exitCode, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as Listed[];
}

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "switchyard-harness-lookup-"));
  fakes = join(scratch, "bin");
  mkdirSync(fakes);
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("harness lookup, as `switchyard providers` reports it", () => {
  it("a harness outside the tested range is usable, with a warning naming where it is, the range and the install command", async () => {
    const pi = fake("pi", "0.99.0");
    const [listed] = await providers(
      { providers: [{ id: "pi", driver: "pi", options: { piPath: pi } }] },
      dirname(process.execPath),
    );
    expect(listed).toMatchObject({ id: "pi", available: true, harness: { inTestedRange: false } });
    expect(listed!.warnings).toEqual([
      `Pi 0.99.0 (${pi}) is outside the versions this plugin was tested with (^1.6.0): it may work; if it misbehaves, install a tested version (npm i -g @earendil-works/pi-coding-agent, at a version in ^1.6.0).`,
    ]);
  });

  it("a Claude Code whose protocol is known to differ is refused, saying why and how to install a supported one", async () => {
    const claude = fake("claude", "2.1.100 (Claude Code)");
    const [listed] = await providers(
      { providers: [{ id: "claude", driver: "claude", options: { claudePath: claude } }] },
      dirname(process.execPath),
    );
    expect(listed).toMatchObject({ id: "claude", available: false });
    expect(listed!.reason).toContain(
      `Claude Code 2.1.100 (${claude}) is outside the versions this plugin supports (>=2.1.332): older releases do not read the MCP servers`,
    );
    expect(listed!.reason).toContain("Install a supported one (npm i -g @anthropic-ai/claude-agent-sdk");
  });

  it("is looked for on the PATH the instance runs with first, then in the global npm roots, then next to the plugin", async () => {
    const codex = fake("codex", "codex-cli 0.171.0");
    const [found] = await providers(
      { providers: [{ id: "codex", driver: "codex" }] },
      `${fakes}:${dirname(process.execPath)}`,
    );
    expect(found!.harness?.searched).toEqual([{ source: "path", what: "`codex` on PATH", found: codex }]);

    // Not on the PATH the instance runs with (its own environment's): then the global npm roots,
    // then next to the plugin, where this checkout's dev install has it. (Installed without it,
    // the user-install test shows the reason naming all of these and the install command.)
    const [local] = await providers(
      { providers: [{ id: "oc", driver: "opencode", environment: { PATH: dirname(process.execPath) } }] },
      `${fakes}:${dirname(process.execPath)}`,
    );
    const searched = local!.harness!.searched;
    expect(searched[0]).toEqual({ source: "path", what: "`opencode` on PATH", found: null });
    expect(searched.slice(1, -1).map((lookup) => [lookup.source, lookup.found])).toEqual(
      searched.slice(1, -1).map(() => ["global", null]),
    );
    expect(searched.slice(1, -1).map((lookup) => lookup.what)).toContain(
      `opencode-ai in the global npm root ${join(dirname(dirname(process.execPath)), "lib", "node_modules")}`,
    );
    expect(searched.at(-1)).toMatchObject({ source: "local", what: "opencode-ai next to the plugin" });
  });
});
