import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import { describe, expect, it } from "vitest";

const CORE_DIR = fileURLToPath(new URL("../../", import.meta.url));
const LAUNCHER = join(CORE_DIR, "bin", "switchyard.js");

describe("the switchyard bin (core/bin/switchyard.js)", () => {
  it("is what the package declares as its bin, so npm links it at install time, before any build", () => {
    const manifest = JSON.parse(readFileSync(join(CORE_DIR, "package.json"), "utf8")) as { bin: Record<string, string>; files: string[] };
    expect(manifest.bin).toEqual({ switchyard: "./bin/switchyard.js" });
    expect(manifest.files).toContain("bin");
    // npm ci links bins from the lock file's copy of the manifest, not from package.json.
    const lock = JSON.parse(readFileSync(join(CORE_DIR, "..", "package-lock.json"), "utf8")) as { packages: Record<string, { bin?: Record<string, string> }> };
    expect(lock.packages["core"]?.bin).toEqual({ switchyard: "bin/switchyard.js" });
  });

  it("runs the built CLI", async () => {
    const result = await execa(process.execPath, [LAUNCHER, "--version"], { reject: false });
    expect(result.exitCode, result.stderr).toBe(0);
    const { version } = JSON.parse(readFileSync(join(CORE_DIR, "package.json"), "utf8")) as { version: string };
    expect(result.stdout).toBe(version);
  });

  it("says to build first, with exit code 2, when the CLI is not built", async () => {
    // A checkout laid out like this one, but never built.
    const checkout = mkdtempSync(join(tmpdir(), "switchyard-unbuilt-"));
    try {
      mkdirSync(join(checkout, "core", "bin"), { recursive: true });
      copyFileSync(LAUNCHER, join(checkout, "core", "bin", "switchyard.js"));
      const result = await execa(process.execPath, [join(checkout, "core", "bin", "switchyard.js"), "demo"], { reject: false });
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toContain(`Switchyard is not built yet (${join(checkout, "core", "dist", "cli", "main.js")} is missing)`);
      expect(result.stderr).toContain(`Run \`npm run build\` in ${checkout}, then run the command again.`);
    } finally {
      rmSync(checkout, { recursive: true, force: true });
    }
  });
});
