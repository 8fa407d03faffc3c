// Preloaded (`node --import`) by the Node 22 CI step: every `better-sqlite3` the workspace
// resolves, by `import` or `require`, from any package, is redirected to the copy in this
// folder, whose native addon was built for this Node's ABI. The workspace's own copy (built for
// Node 20, which runs the main test step) is never touched. Synchronous hooks
// (`module.registerHooks`, Node >= 22.15) cover `require()` as well as `import`, and reach
// every child process started with this Node through NODE_OPTIONS.
import { registerHooks } from "node:module";

const PACKAGE = "/node_modules/better-sqlite3/";
const ours = new URL(`.${PACKAGE}`, import.meta.url).href;

registerHooks({
  resolve(specifier, context, nextResolve) {
    const resolved = nextResolve(specifier, context);
    const at = resolved.url.indexOf(PACKAGE);
    if (!resolved.url.startsWith("file:") || at < 0 || resolved.url.startsWith(ours)) return resolved;
    return { ...resolved, url: ours + resolved.url.slice(at + PACKAGE.length) };
  },
});
