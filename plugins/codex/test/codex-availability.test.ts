import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { OrchestrationAdapter } from "@switchyard/sdk";
import plugin from "../src/index.js";
import { codexHome, createAcpTestContext, openSession, type AcpTestContext, type CodexHome } from "./codex-lab.js";

// What a Codex instance's availability check finds without opening a session, and what a
// session that fails anyway says. The real codex 0.171 binary; no model is ever called (the
// model server URL points nowhere).

let ctx: AcpTestContext;
let home: CodexHome;
const adapters: OrchestrationAdapter[] = [];

beforeEach(async () => {
  ctx = await createAcpTestContext();
  home = await codexHome("http://127.0.0.1:9/v1");
});

afterEach(async () => {
  for (const adapter of adapters.splice(0)) await adapter.dispose?.();
  await ctx.dispose();
  await home.cleanup();
});

async function adapterFor(driverKind: "codex" | "codex-exec", homePath: string): Promise<OrchestrationAdapter> {
  const driver = plugin.drivers.find((candidate) => candidate.driverKind === driverKind)!;
  const options = await driver.optionsSchema!["~standard"].validate({});
  if (options.issues) throw new Error(JSON.stringify(options.issues));
  const adapter = await driver.create({
    instance: {
      id: `${driverKind}-1`,
      driver: driverKind,
      displayName: driverKind,
      homePath,
      environment: home.env,
      customModels: [],
    },
    options: options.value,
    context: ctx.context,
  });
  adapters.push(adapter);
  return adapter;
}

describe("codex availability", () => {
  for (const driverKind of ["codex", "codex-exec"] as const) {
    it(`${driverKind}: an instance whose homePath does not exist is unavailable at both probe depths, and says which path`, async () => {
      const parent = await mkdtemp(join(tmpdir(), "switchyard-codex-gone-"));
      const missing = join(parent, "nope");
      const adapter = await adapterFor(driverKind, missing);
      try {
        for (const depth of ["inspect", "full"] as const) {
          const status = await adapter.probe({ depth });
          expect(status).toMatchObject({ installed: true, executable: false });
          expect(status.message).toContain(`"${missing}" (CODEX_HOME) does not exist`);
        }
      } finally {
        await rm(parent, { recursive: true, force: true });
      }
    });
  }

  it("an instance whose homePath is a file is unavailable", async () => {
    const adapter = await adapterFor("codex", join(home.home, "config.toml"));
    const status = await adapter.probe({ depth: "inspect" });
    expect(status.executable).toBe(false);
    expect(status.message).toContain("is not a folder");
  });

  it("an available instance passes the quick check: version, the configured model, credentials from the provider's key variable", async () => {
    const adapter = await adapterFor("codex", home.home);
    const status = await adapter.probe({ depth: "inspect" });
    expect(status).toMatchObject({ installed: true, executable: true, authenticated: true, version: "0.171.0" });
    expect(status.models[0]).toEqual({ id: "fake-model", isDefault: true, source: "harness_config" });
  });

  it("an inspect probe starts no app-server (no catalog from model/list); a full one asks it", async () => {
    const adapter = await adapterFor("codex-exec", home.home);
    const quick = await adapter.probe({ depth: "inspect" });
    expect(quick.models.map((model) => model.id)).toEqual(["fake-model"]);
    const full = await adapter.probe({ depth: "full" });
    expect(full.models[0]).toEqual({ id: "fake-model", isDefault: true, source: "harness_config" });
    expect(full.models.length).toBeGreaterThan(1);
    // The rest is Codex's own catalog (OpenAI's models), whatever base_url config.toml names.
    expect(full.models.slice(1).every((model) => model.source === "harness_catalog")).toBe(true);
  });

  it("a session whose CODEX_HOME vanished after the check fails with what Codex said on stderr", async () => {
    const adapter = await adapterFor("codex", home.home);
    expect((await adapter.probe({ depth: "inspect" })).executable).toBe(true);
    await rm(home.home, { recursive: true, force: true });
    const failure = await openSession(adapter, home).then(
      () => null,
      (error: unknown) => error as { code: string; message: string },
    );
    expect(failure?.code).toBe("provider_unavailable");
    expect(failure?.message).toContain(`CODEX_HOME points to "${home.home}", but that path does not exist`);
  });
});
