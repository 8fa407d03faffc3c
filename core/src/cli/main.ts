#!/usr/bin/env node
// The command line as a checkout runs it (`node core/dist/cli/main.js`, `npm start`) and as the
// server runs its own helpers (`mcp-bridge`). Installed, the `switchyard` bin of @switchyard/cli
// runs `runCli` with the plugins it ships.
import { runCli } from "./run-cli.js";

await runCli();
