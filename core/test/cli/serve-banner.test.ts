import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { SCRIPTED_PROVIDER_PLUGIN_DIR } from "@switchyard/testkit/scripted-provider";
import { afterAll, describe, expect, it } from "vitest";
import { CLI } from "../support/cli.js";
import { writeHomeConfig } from "../support/serve-process.js";

describe("switchyard serve's banner", () => {
  const home = mkdtempSync(join(tmpdir(), "switchyard-serve-banner-"));
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  it("marks a provider instance that cannot run work, with why, and points to doctor", async () => {
    writeHomeConfig(home, {
      plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR],
      providers: [
        { id: "alpha", driver: "scripted", options: {} },
        { id: "delta", driver: "scripted", options: { status: { installed: false } } },
      ],
    });
    const { NO_COLOR: _noColor, FORCE_COLOR: _forceColor, ...env } = process.env;
    const child = spawn(process.execPath, [CLI, "serve", "--port", "0", "--home", home, "--log-level", "warn"], {
      stdio: ["ignore", "pipe", "pipe"],
      env,
    });
    const lines: string[] = [];
    try {
      await new Promise<void>((resolve, reject) => {
        createInterface({ input: child.stdout! }).on("line", (line) => {
          lines.push(line);
          if (line.startsWith("warning:") || lines.length > 12) resolve();
        });
        child.on("exit", (code) => reject(new Error(`serve exited (${code}) before its banner: ${lines.join("\n")}`)));
      });
    } finally {
      const exited =
        child.exitCode !== null ? Promise.resolve() : new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
    expect(lines.find((line) => line.startsWith("Providers:"))).toBe(
      'Providers: alpha (scripted), delta (scripted, unavailable: The scripted provider "delta" reports installed=false executable=false authenticated=true.)',
    );
    expect(lines).toContain(
      "warning: 1 provider instance(s) cannot run work now; `switchyard doctor` says why and what to do.",
    );
  }, 120_000);
});
