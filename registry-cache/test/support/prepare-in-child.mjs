// Runs one `prepare` in its own process, for the cross-process install-lock test. Uses the
// built package (dist), exactly as another switchyard process would.
import { RegistryCatalog } from "../../dist/index.js";

const [cacheDir, registryUrl, agentId, platform] = process.argv.slice(2);
const catalog = new RegistryCatalog({ cacheDir, registryUrl, platform });
const phases = [];
const prepared = await catalog.prepare(agentId, { onProgress: (event) => phases.push(event.phase) });
process.stdout.write(
  JSON.stringify({
    pid: process.pid,
    alreadyInstalled: prepared.alreadyInstalled,
    command: prepared.launch.command,
    phases,
  }),
);
