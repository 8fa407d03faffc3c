import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

// The build lands where `switchyard serve` reads it (core/dist/web, see
// core/src/transports/http/web-app.ts), so `npm run build` is the only step.
export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "/",
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    outDir: fileURLToPath(new URL("../core/dist/web", import.meta.url)),
    emptyOutDir: true,
    target: "es2022",
    sourcemap: false,
    // The CSP allows no inline script or style: keep every asset a file.
    assetsInlineLimit: 0,
  },
});
