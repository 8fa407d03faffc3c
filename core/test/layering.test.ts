import {
  appendFileSync,
  cpSync,
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
import { dirname, join, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// The layering rules (.dependency-cruiser.cjs) as CI runs them (`npm run lint:deps`): the tree
// as it is passes, and a temporary copy of it with wrong-way imports written in fails, each
// import with the rule it breaks.

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const DEPCRUISE = join(ROOT, "node_modules", "dependency-cruiser", "bin", "dependency-cruise.mjs");
const COPIED_FOLDERS = ["spec", "core", "sdk", "testkit", "registry-cache", "plugins", "templates"];
const COPIED_FILES = [
  "package.json",
  ".dependency-cruiser.cjs",
  "tsconfig.base.json",
  "tsconfig.dependency-cruiser.json",
];

/** The arguments of `npm run lint:deps`, so this test checks exactly the command CI runs. */
function lintDepsArguments(): string[] {
  const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };
  const [command, ...args] = (manifest.scripts["lint:deps"] ?? "").trim().split(/\s+/);
  if (command !== "depcruise")
    throw new Error(`expected "lint:deps" to run depcruise, found: ${manifest.scripts["lint:deps"]}`);
  return args;
}

interface Violation {
  rule: string;
  from: string;
  to: string;
  cycle: string[];
}

/**
 * Runs the rules as `npm run lint:deps` does, with its default report, and reads the
 * violations off that report: what a person sees in CI is what is checked here.
 */
async function cruise(cwd: string): Promise<{ exitCode: number | undefined; report: string; violations: Violation[] }> {
  const { FORCE_COLOR: _forceColor, ...inherited } = process.env;
  const result = await execa(process.execPath, [DEPCRUISE, ...lintDepsArguments()], {
    cwd,
    reject: false,
    timeout: 180_000,
    stdin: "ignore",
    extendEnv: false,
    env: { ...inherited, NO_COLOR: "1" },
    all: true,
  });
  const report = String(result.all);
  const violations: Violation[] = [];
  for (const line of report.split("\n")) {
    // "  error <rule>: <from> → <to>"; a cycle's other modules follow on their own lines.
    const start = /^\s+error ([\w-]+): (\S+) →\s*(\S*)\s*$/.exec(line);
    if (start) {
      violations.push({ rule: start[1]!, from: start[2]!, to: start[3] ?? "", cycle: [] });
      continue;
    }
    const step = /^\s{4,}(\S+)(?: →)?\s*$/.exec(line);
    const last = violations.at(-1);
    if (step && last?.rule === "no-circular") last.cycle.push(step[1]!);
  }
  return { exitCode: result.exitCode, report, violations };
}

/** node_modules at the top and in the copied packages (plugins/claude has its own). */
function installedPackageFolders(): string[] {
  const found = ["node_modules"];
  const packages = COPIED_FOLDERS.flatMap((folder) => [
    folder,
    ...readdirSync(join(ROOT, folder), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => join(folder, e.name)),
  ]);
  for (const folder of packages)
    if (existsSync(join(ROOT, folder, "node_modules"))) found.push(join(folder, "node_modules"));
  return found;
}

/** A new file in the copy, and the rules its one import breaks. */
const WRONG_WAY_FILES: { file: string; text: string; rules: string[] }[] = [
  {
    file: "core/src/store/wrong-way.ts",
    text: `import { ThreadQueryService } from "../services/thread-query-service.js";\nexport const wrongWay = ThreadQueryService;\n`,
    rules: ["store-imports-only-below", "nothing-below-services-imports-services-or-host"],
  },
  {
    // A token from the composition root's catalogue: the back-up arrow a central tokens file made.
    file: "core/src/engine/wrong-way.ts",
    text: `import type { TOKENS } from "../host/tokens.js";\nexport type WrongWay = typeof TOKENS;\n`,
    rules: ["engine-imports-only-below", "nothing-below-services-imports-services-or-host"],
  },
  {
    file: "core/src/policy/wrong-way.ts",
    text: `import type { Engine } from "../engine/ports.js";\nexport type WrongWay = Engine;\n`,
    rules: ["policy-imports-only-below"],
  },
  {
    file: "core/src/transports/mcp/wrong-way.ts",
    text: `import { Store } from "../../store/store.js";\nexport const wrongWay = Store;\n`,
    rules: ["transports-import-services-not-internals"],
  },
  {
    // The HTTP API adapts the contract; it never borrows an MCP tool's schemas.
    file: "core/src/transports/http/api/routes/wrong-way.ts",
    text: `import { threadSendTool } from "../../../mcp/tools/thread-send.js";\nexport const wrongWay = threadSendTool.input;\n`,
    rules: ["http-imports-no-mcp"],
  },
  {
    file: "core/src/transports/mcp/wrong-way-http.ts",
    text: `import { ThreadPath } from "../http/api/routes/threads.js";\nexport const wrongWay = ThreadPath;\n`,
    rules: ["mcp-imports-no-http"],
  },
  {
    file: "core/src/contract/wrong-way.ts",
    text: `import { threadSendTool } from "../transports/mcp/tools/thread-send.js";\nexport const wrongWay = threadSendTool;\n`,
    rules: ["contract-imports-services-not-transports"],
  },
  {
    file: "core/src/contract/wrong-way-engine.ts",
    text: `import type { Engine } from "../engine/ports.js";\nexport type WrongWay = Engine;\n`,
    rules: ["contract-uses-only-the-engine-failure-type"],
  },
  {
    file: "core/src/services/wrong-way.ts",
    text: `import { createPiDriver } from "../../../plugins/pi/src/index.js";\nexport const wrongWay = createPiDriver;\n`,
    rules: ["core-imports-no-plugin"],
  },
  {
    file: "core/src/cli/wrong-way.ts",
    text: `import * as testkit from "@switchyard/testkit";\nexport const wrongWay = testkit;\n`,
    rules: ["core-imports-no-sdk-or-testkit"],
  },
  {
    file: "core/src/cli/wrong-way-driver.ts",
    text: `import Database from "better-sqlite3";\nexport const wrongWay = Database;\n`,
    rules: ["sqlite-driver-only-in-the-store"],
  },
  {
    // A new folder of core/src, in no layer yet.
    file: "core/src/dashboard/wrong-way.ts",
    text: `import { systemClock } from "../util/clock.js";\nexport const wrongWay = systemClock;\n`,
    rules: ["core-folder-has-a-layer"],
  },
  {
    // The PostgreSQL driver outside its folder of the store, even as a type.
    file: "core/src/store/wrong-way-pg.ts",
    text: `import type pg from "pg";\nexport type WrongWay = pg.Pool;\n`,
    rules: ["pg-only-in-the-postgres-store"],
  },
  {
    file: "spec/src/wrong-way.ts",
    text: `import { z } from "zod";\nexport const wrongWay = z;\n`,
    rules: ["spec-imports-nothing"],
  },
  {
    file: "sdk/src/wrong-way.ts",
    text: `import { SwitchyardHost } from "@switchyard/core";\nexport const wrongWay = SwitchyardHost;\n`,
    rules: ["sdk-imports-no-core-or-testkit"],
  },
  {
    file: "plugins/grok/src/wrong-way.ts",
    text: `import { SwitchyardHost } from "@switchyard/core";\nexport const wrongWay = SwitchyardHost;\n`,
    rules: ["plugin-imports-no-core", "plugin-source-imports-only-spec-sdk-or-a-library"],
  },
  {
    file: "plugins/pi/src/wrong-way.ts",
    text: `import { CLAUDE_CAPABILITIES } from "../../claude/src/claude-capabilities.js";\nexport const wrongWay = CLAUDE_CAPABILITIES;\n`,
    rules: ["plugin-imports-no-other-plugin", "plugin-stays-in-its-folder"],
  },
  {
    // A plugin's tests may use core's test helpers (core/test/support), not core itself.
    file: "plugins/grok/test/wrong-way.ts",
    text: `import { SwitchyardHost } from "../../../core/src/index.js";\nexport const wrongWay = SwitchyardHost;\n`,
    rules: ["plugin-imports-no-core", "plugin-test-stays-in-its-folder"],
  },
  {
    // semver is installed (core uses it) but the pi plugin does not declare it.
    file: "plugins/pi/src/wrong-way-undeclared.ts",
    text: `import semver from "semver";\nexport const wrongWay = semver;\n`,
    rules: ["plugin-declares-what-it-imports"],
  },
];

/** A type-only import cycle inside one floor (the engine's ports and the engine). */
const TYPE_CYCLE = {
  file: "core/src/engine/ports.ts",
  text: `\nimport type { TransactionalEngine } from "./engine.js";\nexport type WrongWayEngine = TransactionalEngine;\n`,
};

describe("layering rules (npm run lint:deps)", () => {
  let copy: string;

  beforeAll(() => {
    copy = mkdtempSync(join(tmpdir(), "layering-"));
    for (const file of COPIED_FILES) cpSync(join(ROOT, file), join(copy, file));
    for (const folder of COPIED_FOLDERS) {
      cpSync(join(ROOT, folder), join(copy, folder), {
        recursive: true,
        filter: (source) => !source.split(sep).some((part) => part === "node_modules" || part === "dist"),
      });
    }
    // Installed packages resolve as in the checkout (a package's own node_modules too);
    // workspace packages resolve to the copy's sources through tsconfig.dependency-cruiser.json.
    for (const modules of installedPackageFolders()) symlinkSync(join(ROOT, modules), join(copy, modules), "dir");
    for (const { file, text } of WRONG_WAY_FILES) {
      mkdirSync(dirname(join(copy, file)), { recursive: true });
      writeFileSync(join(copy, file), text);
    }
    appendFileSync(join(copy, TYPE_CYCLE.file), TYPE_CYCLE.text);
  });

  afterAll(() => {
    if (copy) rmSync(copy, { recursive: true, force: true });
  });

  it("passes on the tree as it is", async () => {
    const { exitCode, report, violations } = await cruise(ROOT);
    expect(violations, report).toEqual([]);
    expect(exitCode, report).toBe(0);
    expect(report).toMatch(/no dependency violations found/);
  }, 200_000);

  it("fails on each wrong-way import with the rule it breaks, and on a type-only cycle", async () => {
    const { exitCode, report, violations } = await cruise(copy);
    expect(exitCode, report).not.toBe(0);

    const expected = WRONG_WAY_FILES.flatMap(({ file, rules }) => rules.map((rule) => `${rule} ${file}`)).sort();
    const found = violations.filter((v) => v.rule !== "no-circular").map((v) => `${v.rule} ${v.from}`);
    expect([...new Set(found)].sort(), report).toEqual(expected);

    const cycles = violations.filter((v) => v.rule === "no-circular");
    expect(cycles.length).toBeGreaterThan(0);
    const modulesOf = (v: Violation) => [...new Set([v.from, ...v.cycle])].sort();
    expect(cycles.map(modulesOf), report).toContainEqual(["core/src/engine/engine.ts", TYPE_CYCLE.file]);
    for (const v of cycles) expect([v.from, ...v.cycle]).toContain(TYPE_CYCLE.file);
  }, 200_000);
});
