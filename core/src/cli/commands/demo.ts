import type { Command } from "commander";
import { HOST_VERSION } from "../../util/host-version.js";
import { CliError } from "../output.js";

/**
 * `switchyard demo` lives in the testkit (it uses the scripted model server and harness homes),
 * and the testkit depends on core. Core finds it at run time, so the build has no cycle and a
 * Switchyard installed without the testkit still runs every other command.
 */
export const DEMO_MODULE = "@switchyard/testkit/demo";

/** What the demo module exports. */
export interface DemoModule {
  runDemo(options: { keep?: boolean; pair?: string }): Promise<void>;
}

/** Imports the demo, or fails with what to install when its package is missing. */
export async function loadDemoModule(specifier: string = DEMO_MODULE): Promise<DemoModule> {
  const packageName = specifier.split("/").slice(0, 2).join("/");
  try {
    return (await import(specifier)) as DemoModule;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const message = error instanceof Error ? error.message : String(error);
    if ((code === "ERR_MODULE_NOT_FOUND" || code === "ERR_PACKAGE_PATH_NOT_EXPORTED") && message.includes(packageName)) {
      throw new CliError(
        `switchyard demo needs ${packageName}, which is not installed next to @switchyard/core. Run the demo from a Switchyard checkout after \`npm ci && npm run build\`, or install it: npm install ${packageName}@${HOST_VERSION}`,
      );
    }
    throw new CliError(`The demo could not be loaded from ${specifier}: ${message}`);
  }
}

export function registerDemo(program: Command): void {
  program
    .command("demo")
    .description("Run a real Codex thread that delegates to a real Pi thread (or another --pair), offline (scripted model), and print both transcripts")
    .option("--keep", "leave the server running afterwards and print its URL")
    .option("--pair <parent:child>", "which drivers delegate: two of codex, pi, claude (claude:pi, codex:claude…)", "codex:pi")
    .action(async (options: { keep?: boolean; pair: string }) => {
      const demo = await loadDemoModule();
      await demo.runDemo({ keep: options.keep === true, pair: options.pair });
    });
}
