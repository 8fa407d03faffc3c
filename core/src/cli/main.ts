#!/usr/bin/env node
import "reflect-metadata";
import { CommanderError } from "commander";
import { buildProgram } from "./program.js";
import { endQuietlyWhenPipeCloses, EXIT, reportError } from "./output.js";

async function main(): Promise<void> {
  endQuietlyWhenPipeCloses(process.stdout);
  endQuietlyWhenPipeCloses(process.stderr);
  const program = buildProgram();
  try {
    await program.parseAsync(process.argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version exit 0; usage mistakes exit 2 (commander already printed why).
      process.exitCode = error.exitCode === 0 ? EXIT.ok : EXIT.usage;
      return;
    }
    process.exitCode = reportError(error);
  }
}

await main();
