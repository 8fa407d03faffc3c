#!/usr/bin/env node
// The `switchyard` command. npm links bins when it installs, before anything is built, and
// links none whose file is missing; the CLI itself is compiled to core/dist. So the bin is this
// small committed file: it runs the built CLI, or says how to build it.
import { existsSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";

const entry = new URL("../dist/cli/main.js", import.meta.url);
if (!existsSync(entry)) {
  const checkout = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
  process.stderr.write(
    `error: Switchyard is not built yet (${fileURLToPath(entry)} is missing).\n` +
      `Run \`npm run build\` in ${checkout}, then run the command again.\n`,
  );
  process.exit(2);
}
await import(entry.href);
