import { defineConfig } from "vitest/config";

// One test runner config for the whole workspace. The design card names jest.config.ts, but
// the runner is vitest: its oxc transform emits the legacy decorators and the
// design:paramtypes metadata tsyringe needs, for every file regardless of tsconfig includes.
export default defineConfig({
  oxc: { decorator: { legacy: true, emitDecoratorMetadata: true } },
  test: {
    include: [
      "spec/test/**/*.test.ts",
      "core/test/**/*.test.ts",
      "sdk/test/**/*.test.ts",
      // Unit tests of small pure parts sit next to their source (turn-ledger.ts / turn-ledger.test.ts).
      "sdk/src/**/*.test.ts",
      "testkit/test/**/*.test.ts",
      "registry-cache/test/**/*.test.ts",
      "plugins/*/test/**/*.test.ts",
      "templates/*/test/**/*.test.ts",
      "cli/test/**/*.test.ts",
      "web/test/**/*.test.ts",
    ],
    setupFiles: ["./vitest.setup.ts"],
    pool: "forks",
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
