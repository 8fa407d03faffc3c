import { defineConfig } from "vitest/config";

// The conformance suite starts a whole Switchyard host (SQLite, the MCP endpoint) per file and
// real harness processes per test: give hooks and tests room, and one process per file.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    pool: "forks",
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
