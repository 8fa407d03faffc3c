/**
 * Where the plugin finds the Cursor SDK, which is not its dependency (like a harness binary):
 * the sdkPath option, else beside the plugin, else among the sidecar Node's global packages,
 * else a reason that says where it looked and how to install it. Reads real folders; needs no
 * Node 22.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CURSOR_SDK_VERSION, cursorSdkBesidePlugin, locateCursorSdk } from "../src/index.js";

const scratch = mkdtempSync(join(tmpdir(), "switchyard-cursor-sdk-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A folder holding a package.json with `name` and `version`. */
function packageFolder(dir: string, name: string, version: string): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name, version }));
  return dir;
}

/** A Node prefix (`<prefix>/bin/node`) with, optionally, a global @cursor/sdk under `<prefix>/lib/node_modules`. */
function nodePrefix(name: string, globalSdkVersion: string | null): string {
  const prefix = join(scratch, name);
  mkdirSync(join(prefix, "bin"), { recursive: true });
  writeFileSync(join(prefix, "bin", "node"), "");
  if (globalSdkVersion !== null)
    packageFolder(join(prefix, "lib", "node_modules", "@cursor", "sdk"), "@cursor/sdk", globalSdkVersion);
  return join(prefix, "bin", "node");
}

describe("locateCursorSdk", () => {
  it("finds the package beside the plugin (this repository installs it as a devDependency)", () => {
    const beside = cursorSdkBesidePlugin();
    expect(beside).not.toBeNull();
    expect(locateCursorSdk({ nodePath: null })).toEqual({
      ok: true,
      sdk: { dir: beside, version: CURSOR_SDK_VERSION, source: "plugin" },
      warning: null,
    });
  });

  it("takes the sdkPath option first, and tries nothing behind a wrong one", () => {
    const configured = packageFolder(join(scratch, "configured", "@cursor", "sdk"), "@cursor/sdk", CURSOR_SDK_VERSION);
    expect(locateCursorSdk({ sdkPath: configured, nodePath: null })).toMatchObject({
      ok: true,
      sdk: { dir: configured, source: "option" },
    });
    const wrong = packageFolder(join(scratch, "not-the-sdk"), "left-pad", "1.3.0");
    const refused = locateCursorSdk({ sdkPath: wrong, nodePath: null });
    expect(refused.ok).toBe(false);
    expect(!refused.ok && refused.reason).toContain(
      `The sdkPath option names ${wrong}, which holds no @cursor/sdk package`,
    );
    expect(!refused.ok && refused.reason).toContain(`npm install -g @cursor/sdk@${CURSOR_SDK_VERSION}`);
  });

  it("falls back to the sidecar Node's global packages (npm install -g under that Node)", () => {
    const node = nodePrefix("global-node", CURSOR_SDK_VERSION);
    expect(locateCursorSdk({ nodePath: node, besidePlugin: () => null })).toMatchObject({
      ok: true,
      sdk: { dir: join(scratch, "global-node", "lib", "node_modules", "@cursor", "sdk"), source: "node-global" },
    });
  });

  it("without one anywhere, says where it looked and how to install it", () => {
    const node = nodePrefix("bare-node", null);
    const missing = locateCursorSdk({ nodePath: node, besidePlugin: () => null });
    expect(missing.ok).toBe(false);
    const reason = missing.ok ? "" : missing.reason;
    expect(reason).toContain("The Cursor SDK (@cursor/sdk) is not installed");
    expect(reason).toContain("beside the plugin (not resolvable from it)");
    expect(reason).toContain(
      `${join(scratch, "bare-node", "lib", "node_modules", "@cursor", "sdk")} (the Node's global packages)`,
    );
    expect(reason).toContain(`npm install -g @cursor/sdk@${CURSOR_SDK_VERSION} with the Node that runs the sidecar`);
    expect(reason).toContain("sdkPath");
  });

  it("accepts a release the plugin is not tested with, with a warning that names both", () => {
    const newer = packageFolder(join(scratch, "newer", "@cursor", "sdk"), "@cursor/sdk", "1.0.40");
    expect(locateCursorSdk({ sdkPath: newer, nodePath: null })).toEqual({
      ok: true,
      sdk: { dir: newer, version: "1.0.40", source: "option" },
      warning: `The cursor plugin is tested with @cursor/sdk ${CURSOR_SDK_VERSION}; ${newer} holds 1.0.40.`,
    });
  });
});
