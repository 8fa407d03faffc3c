import { createReadStream, existsSync, realpathSync, statSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { extname, join, sep } from "node:path";
import { CORE_PACKAGE_DIR } from "../../util/package-paths.js";

/** Where the build puts the web UI (`npm run build` builds `web/` and copies its dist here). */
export const WEB_APP_DIR = join(CORE_PACKAGE_DIR, "dist", "web");

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".map": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".webp": "image/webp",
  ".woff2": "font/woff2",
  ".txt": "text/plain; charset=utf-8",
  ".webmanifest": "application/manifest+json",
};

/**
 * The page may load only its own scripts, styles and images and talk only to its own origin;
 * it may not be framed (clickjacking an Approve button) and no form may post elsewhere.
 */
export const WEB_APP_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": WEB_APP_CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
};

/** Vite names built assets `<name>-<hash>.<ext>` under assets/: their content never changes. */
const HASHED_ASSET = /^\/assets\/[^/]+-[A-Za-z0-9_-]{8,}\.[a-z0-9]+$/;

/**
 * Serves the built web UI at `/`: files from the app folder with their content types, hashed
 * assets cached for a year (immutable), everything else revalidated; a path that names no file
 * and has no extension is a client route (`/threads/…`) and gets index.html. Every answer
 * carries the CSP and the other security headers. Only GET and HEAD; nothing outside the folder
 * (`..`, encoded or not, and symlinks out of it are refused).
 */
export class WebApp {
  private readonly root: string | null;

  constructor(dir: string = WEB_APP_DIR) {
    this.root = existsSync(join(dir, "index.html")) ? realpathSync(dir) : null;
  }

  /** Whether the UI is built (the folder has an index.html). */
  get available(): boolean {
    return this.root !== null;
  }

  handle(req: IncomingMessage, res: ServerResponse, path: string): void {
    if (req.method !== "GET" && req.method !== "HEAD") {
      // A typed answer like every other refusal of the server, for programs that posted to a wrong path.
      const body = {
        error: "method_not_allowed",
        error_description: `${req.method} ${path} is not allowed: the web UI answers GET and HEAD (the MCP endpoint is /mcp, the HTTP API /api/v1).`,
      };
      this.answer(req, res, 405, "application/json", JSON.stringify(body), { allow: "GET, HEAD" });
      return;
    }
    if (this.root === null) {
      this.answer(
        req,
        res,
        503,
        "text/html; charset=utf-8",
        "<!doctype html><title>Switchyard</title><p>The web UI is not built. Run <code>npm run build</code> in the Switchyard checkout, then reload.</p>\n",
      );
      return;
    }
    let decoded: string;
    try {
      decoded = decodeURIComponent(path);
    } catch {
      this.answer(req, res, 400, "text/plain; charset=utf-8", "The path is not valid percent-encoding.\n");
      return;
    }
    if (decoded.includes("\0") || decoded.split("/").some((part) => part === "..") || decoded.includes("\\")) {
      this.answer(req, res, 400, "text/plain; charset=utf-8", "The path leaves the web UI's folder.\n");
      return;
    }
    const file = this.fileFor(decoded);
    if (file !== null) {
      const immutable = HASHED_ASSET.test(decoded);
      this.sendFile(req, res, file.path, file.size, immutable ? "public, max-age=31536000, immutable" : "no-cache");
      return;
    }
    // A thread's id may hold a dot (thread:cmd:thread.create:…): its page is a client route, not a file.
    if (extname(decoded) !== "" && !decoded.startsWith("/threads/")) {
      this.answer(req, res, 404, "text/plain; charset=utf-8", `There is no ${decoded} in the web UI.\n`);
      return;
    }
    // A client route: the app decides what to show.
    const index = join(this.root, "index.html");
    this.sendFile(req, res, index, statSync(index).size, "no-cache");
  }

  private fileFor(decoded: string): { path: string; size: number } | null {
    const root = this.root!;
    const relative = decoded === "/" ? "index.html" : decoded.replace(/^\/+/, "");
    const candidate = join(root, relative);
    if (!existsSync(candidate)) return null;
    let real: string;
    try {
      real = realpathSync(candidate);
    } catch {
      return null;
    }
    if (real !== root && !real.startsWith(root + sep)) return null;
    const stat = statSync(real);
    return stat.isFile() ? { path: real, size: stat.size } : null;
  }

  private sendFile(req: IncomingMessage, res: ServerResponse, path: string, size: number, cacheControl: string): void {
    const type = CONTENT_TYPES[extname(path).toLowerCase()] ?? "application/octet-stream";
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      "content-type": type,
      "content-length": String(size),
      "cache-control": cacheControl,
    });
    if (req.method === "HEAD") {
      res.end();
      return;
    }
    const stream = createReadStream(path);
    stream.on("error", () => res.destroy());
    stream.pipe(res);
  }

  private answer(
    req: IncomingMessage,
    res: ServerResponse,
    status: number,
    type: string,
    body: string,
    headers: Record<string, string> = {},
  ): void {
    res.writeHead(status, {
      ...SECURITY_HEADERS,
      "content-type": type,
      "content-length": String(Buffer.byteLength(body)),
      "cache-control": "no-store",
      ...headers,
    });
    res.end(req.method === "HEAD" ? undefined : body);
  }
}
