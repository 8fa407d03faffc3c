import type { Command } from "commander";
import { CliError } from "../output.js";

/**
 * `switchyard demo` lives in the sdk (it uses the test lab's scripted model server and harness
 * homes); core loads it at run time so core never depends on the sdk at build time.
 */
const DEMO_MODULE = "@switchyard/sdk/demo";

export function registerDemo(program: Command): void {
  program
    .command("demo")
    .description("Run a real Codex thread that delegates to a real Pi thread (or another --pair), offline (scripted model), and print both transcripts")
    .option("--keep", "leave the server running afterwards and print its URL")
    .option("--pair <parent:child>", "which drivers delegate: two of codex, pi, claude (claude:pi, codex:claude…)", "codex:pi")
    .action(async (options: { keep?: boolean; pair: string }) => {
      let demo: { runDemo(options: { keep?: boolean; pair?: string }): Promise<void> };
      try {
        demo = (await import(DEMO_MODULE)) as typeof demo;
      } catch (error) {
        throw new CliError(`The demo needs @switchyard/sdk and the Codex and Pi plugins (run it from a Switchyard checkout after npm ci): ${(error as Error).message}`);
      }
      await demo.runDemo({ keep: options.keep === true, pair: options.pair });
    });
}
