import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WEB_APP_CSP, WebApp } from "../src/transports/http/web-app.js";

function send(
  port: number,
  method: string,
  path: string,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    // A raw path, exactly as given (no URL normalisation of `..`).
    const req = request({ host: "127.0.0.1", port, method, path, agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

async function serve(app: WebApp): Promise<{ port: number; server: Server }> {
  const server = createServer((req, res) => app.handle(req, res, new URL(req.url ?? "/", "http://127.0.0.1").pathname));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { port: (server.address() as { port: number }).port, server };
}

/** The static handler that serves the built web UI at `/`. */
describe("the web UI's static handler", () => {
  let root: string;
  let port: number;
  let server: Server;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "switchyard-webapp-"));
    const app = join(root, "app");
    mkdirSync(join(app, "assets"), { recursive: true });
    writeFileSync(join(app, "index.html"), "<!doctype html><title>ui</title>");
    writeFileSync(join(app, "assets", "index-AbCdEf12.js"), "console.log(1)");
    writeFileSync(join(root, "secret.txt"), "outside");
    symlinkSync(join(root, "secret.txt"), join(app, "link.txt"));
    ({ port, server } = await serve(new WebApp(app)));
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    rmSync(root, { recursive: true, force: true });
  });

  it("serves the app with its CSP; hashed assets are immutable, the page revalidates; client routes get the page", async () => {
    const page = await send(port, "GET", "/");
    expect([
      page.status,
      page.headers["content-type"],
      page.headers["cache-control"],
      page.headers["content-security-policy"],
      page.headers["x-frame-options"],
    ]).toEqual([200, "text/html; charset=utf-8", "no-cache", WEB_APP_CSP, "DENY"]);
    expect(WEB_APP_CSP).toContain("frame-ancestors 'none'");
    expect(WEB_APP_CSP).toContain("script-src 'self'");
    const asset = await send(port, "GET", "/assets/index-AbCdEf12.js");
    expect([asset.status, asset.headers["content-type"], asset.headers["cache-control"]]).toEqual([
      200,
      "text/javascript; charset=utf-8",
      "public, max-age=31536000, immutable",
    ]);
    const route = await send(port, "GET", "/threads/thread:cmd:abc:0");
    expect([route.status, route.body]).toEqual([200, "<!doctype html><title>ui</title>"]);
    // A thread made by a command has a dot in its id: its page is still the app, not a missing file.
    const dotted = await send(port, "GET", "/threads/thread:cmd:thread.create:req_1:0");
    expect([dotted.status, dotted.body]).toEqual([200, "<!doctype html><title>ui</title>"]);
    expect((await send(port, "HEAD", "/")).body).toBe("");
  });

  it("refuses paths out of its folder, missing files, and anything but GET and HEAD", async () => {
    const answers = await Promise.all([
      send(port, "GET", "/../secret.txt"),
      send(port, "GET", "/%2e%2e/secret.txt"),
      send(port, "GET", "/assets/..%2f..%2fsecret.txt"),
      send(port, "GET", "/link.txt"),
      send(port, "GET", "/assets/missing.js"),
      send(port, "GET", "/%E0%A4%A"),
      send(port, "POST", "/"),
    ]);
    // The URL parser already resolves `..` and `%2e%2e` to a path inside the folder (not found); an encoded slash is refused.
    expect(answers.map((answer) => answer.status)).toEqual([404, 404, 400, 404, 404, 400, 405]);
    expect(answers.every((answer) => !answer.body.includes("outside"))).toBe(true);
    expect(answers[6]!.headers.allow).toBe("GET, HEAD");
  });

  it("says how to build the UI when it is not built", async () => {
    const empty = mkdtempSync(join(tmpdir(), "switchyard-webapp-empty-"));
    const unbuilt = await serve(new WebApp(empty));
    try {
      const answer = await send(unbuilt.port, "GET", "/");
      expect(answer.status).toBe(503);
      expect(answer.body).toContain("npm run build");
    } finally {
      await new Promise((resolve) => unbuilt.server.close(resolve));
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
