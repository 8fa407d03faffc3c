import { mkdtempSync, rmSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSessions } from "../../src/services/credentials/web-sessions.js";
import { ApiClient, type ApiAnswer, type FailureBody } from "../support/api-client.js";
import { selfSignedTlsIdentity } from "../../src/transports/http/tls-identity.js";
import { McpLab } from "../support/mcp-lab.js";
import { SseClient, type RefusedStream } from "../support/sse-client.js";
import { sqliteStore } from "../support/sqlite-store.js";

/** A signed-in browser: the cookie it sends (name=value) and the page secret its page holds. */
interface Browser {
  readonly cookie: string;
  readonly pageSecret: string;
}

function cookieOf(answer: ApiAnswer): string {
  const header = answer.headers["set-cookie"];
  const value = (Array.isArray(header) ? header[0] : header) ?? "";
  return value.split(";")[0]!;
}

/**
 * The web UI's session: a token (or a one-time code) becomes two secrets, an HttpOnly,
 * SameSite=Strict cookie named for this server and a page secret answered once to the page,
 * which together act with exactly the token's verbs, projects and ceiling, at the origin the
 * page signed in at. A browser sends the cookie to every server on the same host name, so the
 * cookie alone must authorise nothing: not a read, not the event stream, not a change.
 */
describe("web UI sessions through the API router", () => {
  let lab: McpLab;
  let anonymous: ApiClient;
  let origin: string;
  let host: string;

  beforeAll(async () => {
    lab = await McpLab.start();
    anonymous = new ApiClient(lab.server.apiUrl, null);
    origin = lab.server.url;
    host = new URL(origin).host;
  });
  afterAll(async () => lab.stop());

  const issue = (
    capabilities: ("orchestration:read" | "orchestration:operate" | "orchestration:approve")[],
    extra: { projects?: string[] } = {},
  ) =>
    lab.registry.issueClientToken({
      ttlMs: 3_600_000,
      capabilities,
      ceiling: { runtimeMode: "approval-required", interactionMode: "default" },
      ...extra,
    });

  /** What the UI's own pages send besides the session: a browser's same-origin fetch. */
  const fromUi = () => ({ origin, "sec-fetch-site": "same-origin" });
  /** What the UI's own fetches send with its session. */
  const asPage = (browser: Browser) => ({
    cookie: browser.cookie,
    "x-switchyard-page-secret": browser.pageSecret,
    ...fromUi(),
  });

  async function signIn(body: Record<string, string>, headers?: Record<string, string>): Promise<ApiAnswer> {
    return anonymous.post("/ui/session", body, headers ?? fromUi());
  }

  async function signedIn(body: Record<string, string>): Promise<Browser> {
    const answer = await signIn(body);
    expect(answer.status, answer.text).toBe(200);
    return { cookie: cookieOf(answer), pageSecret: (answer.body as { pageSecret: string }).pageSecret };
  }

  const createThread = (headers: Record<string, string>, title = "from the cookie") =>
    anonymous.post(
      "/threads",
      { projectId: lab.projectId, threads: [{ title, target: { providerInstanceId: "alpha" } }] },
      headers,
    );

  it("sets an HttpOnly, SameSite=Strict cookie named for this server, answers the page secret once, and the two act with the token's verbs and projects", async () => {
    const other = await lab.host.projects.add(mkdtempSync(join(tmpdir(), "switchyard-other-")), "other");
    const { token } = issue(["orchestration:operate"], { projects: [lab.projectId] });
    const answer = await signIn({ token });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      verbs: ["read", "operate"],
      projects: [lab.projectId],
      ceiling: { runtimeMode: "approval-required", interactionMode: "default" },
    });
    const setCookie = String(answer.headers["set-cookie"]);
    expect(setCookie).toMatch(
      new RegExp(
        `^switchyard_session_${lab.registry.environmentId}=sy_us_[A-Za-z0-9_-]+; Path=/; HttpOnly; SameSite=Strict; Max-Age=\\d+$`,
      ),
    );
    expect(setCookie).not.toContain(token);
    const pageSecret = (answer.body as { pageSecret: string }).pageSecret;
    expect(pageSecret).toMatch(/^sy_up_[A-Za-z0-9_-]{43}$/);
    expect(setCookie).not.toContain(pageSecret);
    const browser = { cookie: cookieOf(answer), pageSecret };

    const projects = await anonymous.get("/projects", {}, asPage(browser));
    expect(projects.status).toBe(200);
    expect((projects.body as { projects: { projectId: string }[] }).projects.map((p) => p.projectId)).toEqual([
      lab.projectId,
    ]);
    const elsewhere = await anonymous.get("/threads", { projectId: other.id }, asPage(browser));
    expect(elsewhere.status).toBe(403);
    // The ceiling holds too: no broader work than the token may start.
    const broader = await anonymous.post(
      "/threads",
      {
        projectId: lab.projectId,
        threads: [{ title: "x", runtimeMode: "full-access", target: { providerInstanceId: "alpha" } }],
      },
      asPage(browser),
    );
    expect([broader.status, (broader.body as FailureBody).error.code]).toEqual([403, "runtime_mode_escalation_denied"]);
    // No read hands the page secret out again.
    const session = await anonymous.get("/ui/session", {}, asPage(browser));
    expect(session.status).toBe(200);
    expect(session.text).not.toContain(pageSecret);
    expect(Object.keys(session.body as object).sort()).toEqual(["ceiling", "expiresAt", "projects", "verbs"]);
    // Only hashes are stored.
    const rows = sqliteStore(lab.host.store).db.prepare("SELECT * FROM web_sessions").all() as Record<
      string,
      unknown
    >[];
    expect(JSON.stringify(rows)).not.toContain(browser.cookie.split("=")[1]!);
    expect(JSON.stringify(rows)).not.toContain(pageSecret);
  });

  it("refuses the cookie without its page secret for a read, the event stream and a change, however well it forges the rest; the session lives on", async () => {
    const browser = await signedIn({ token: issue(["orchestration:operate"]).token });
    const otherBrowser = await signedIn({ token: issue(["orchestration:operate"]).token });
    // Everything a server that captured the cookie can send: the UI's Origin, Sec-Fetch-Site,
    // the constant header the UI used to send, and page secrets that are not this session's.
    const forged = { cookie: browser.cookie, ...fromUi(), "x-switchyard-csrf": "1" };
    const attempts: Record<string, Record<string, string>> = {
      "cookie alone": forged,
      "a made-up page secret": { ...forged, "x-switchyard-page-secret": `sy_up_${"A".repeat(43)}` },
      "another session's page secret": { ...forged, "x-switchyard-page-secret": otherBrowser.pageSecret },
      "the cookie's own secret as page secret": {
        ...forged,
        "x-switchyard-page-secret": browser.cookie.split("=")[1]!,
      },
    };
    const outcomes: Record<string, unknown> = {};
    for (const [name, headers] of Object.entries(attempts)) {
      const read = await anonymous.get("/projects", {}, headers);
      const stream = await SseClient.open(`${lab.server.apiUrl}/events`, { headers });
      const change = await createThread(headers);
      const signOut = await anonymous.post("/ui/session/end", {}, headers);
      outcomes[name] = [read, stream as RefusedStream, change, signOut].map((answer) => [
        answer.status,
        (answer.body as FailureBody).error?.code,
        (answer.body as FailureBody).error?.details.reason,
      ]);
    }
    const reasonOf = (name: string) => (name === "cookie alone" ? "page_secret_missing" : "page_secret_mismatch");
    expect(outcomes).toEqual(
      Object.fromEntries(
        Object.keys(attempts).map((name) => [
          name,
          Array.from({ length: 4 }, () => [401, "invalid_token", reasonOf(name)]),
        ]),
      ),
    );
    const missing = await anonymous.get("/projects", {}, forged);
    expect((missing.body as FailureBody).error.message).toContain("x-switchyard-page-secret");
    expect(lab.server.eventStreams.size).toBe(0);
    expect(lab.host.store.select("thread", "1 = 1").filter((t) => t.title === "from the cookie")).toEqual([]);
    // None of it signed the browser out: its page still reads, streams and changes.
    expect((await anonymous.get("/ui/session", {}, asPage(browser))).status).toBe(200);
    const stream = await SseClient.open(`${lab.server.apiUrl}/events`, { headers: asPage(browser) });
    expect(stream).toBeInstanceOf(SseClient);
    (stream as SseClient).close();
    expect((await createThread(asPage(browser), "from the page")).status).toBe(201);
  });

  it("answers a session only at the origin it signed in at", async () => {
    const browser = await signedIn({ token: issue(["orchestration:read"]).token });
    const localhost = `localhost:${new URL(origin).port}`;
    const elsewhere = await anonymous.get(
      "/projects",
      {},
      { ...asPage(browser), host: localhost, origin: `http://${localhost}` },
    );
    expect([
      elsewhere.status,
      (elsewhere.body as FailureBody).error.code,
      (elsewhere.body as FailureBody).error.details.reason,
    ]).toEqual([401, "invalid_token", "other_origin"]);
    expect((elsewhere.body as FailureBody).error.message).toContain(`http://${localhost}`);
    expect((await anonymous.get("/projects", {}, asPage(browser))).status).toBe(200);
  });

  it("still refuses a cookie-and-secret request from another page's origin, a cross-site fetch, and a change without Origin", async () => {
    const browser = await signedIn({ token: issue(["orchestration:operate"]).token });
    const withSession = { cookie: browser.cookie, "x-switchyard-page-secret": browser.pageSecret };
    const refusals: Record<string, unknown> = {};
    const cases: Record<string, Record<string, string>> = {
      "no Origin": { ...withSession },
      "another loopback port (same site)": { ...withSession, origin: "http://127.0.0.1:1" },
      "same-site fetch": { ...withSession, origin, "sec-fetch-site": "same-site" },
      "cross-site fetch": { ...withSession, origin, "sec-fetch-site": "cross-site" },
    };
    for (const [name, headers] of Object.entries(cases)) {
      const answer = await createThread(headers);
      refusals[name] = [answer.status, (answer.body as FailureBody).error?.code];
    }
    const read = await anonymous.get("/projects", {}, { ...withSession, origin: "http://localhost:1" });
    refusals["read from another origin"] = [read.status, (read.body as FailureBody).error?.code];
    expect(refusals).toEqual(
      Object.fromEntries(
        [...Object.keys(cases), "read from another origin"].map((name) => [name, [403, "cross_origin_refused"]]),
      ),
    );
    expect(lab.host.store.select("thread", "1 = 1").filter((t) => t.title === "from the cookie")).toEqual([]);
    // A same-origin Origin in another case of the Host is still the UI's own.
    expect(
      (await anonymous.get("/projects", {}, { ...asPage(browser), origin: `http://${host.toUpperCase()}` })).status,
    ).toBe(200);
  });

  it("signs in only from the UI's own origin (Origin required), never with an agent's credential", async () => {
    const { token } = issue(["orchestration:read"]);
    expect(((await signIn({ token }, { origin: "http://127.0.0.1:1" })).body as FailureBody).error.code).toBe(
      "cross_origin_refused",
    );
    expect(((await signIn({ token }, { "sec-fetch-site": "same-origin" })).body as FailureBody).error.code).toBe(
      "cross_origin_refused",
    );
    const agent = await lab.liveAgent({ title: "an agent" });
    const refused = await signIn({ token: await lab.tokenFor(agent.threadId) });
    expect([refused.status, (refused.body as FailureBody).error.details.reason]).toEqual([401, "not_a_client_token"]);
    agent.release();
    const unknown = await signIn({ token: "sy_not-a-token-at-all-000000" });
    expect([unknown.status, (unknown.body as FailureBody).error.code]).toEqual([401, "invalid_token"]);
    expect((await signIn({ token, code: "x" })).status).toBe(400);
  });

  it("spends a one-time code once, refuses an expired one, and ends sessions with their token or at a sign-out that shows the page secret", async () => {
    const issued = issue(["orchestration:read", "orchestration:approve"]);
    const sessions = lab.host.container.resolve(WebSessions);
    const { code } = sessions.issueCode(issued.id);
    const first = await signIn({ code });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ verbs: ["read", "approve"], pageSecret: expect.stringMatching(/^sy_up_/) });
    const again = await signIn({ code });
    expect([again.status, (again.body as FailureBody).error.details.reason]).toEqual([401, "code_used"]);

    const stale = sessions.issueCode(issued.id);
    sqliteStore(lab.host.store)
      .db.prepare("UPDATE web_sessions SET expires_at = 0 WHERE kind = 'code' AND ended_at IS NULL")
      .run();
    expect(((await signIn({ code: stale.code })).body as FailureBody).error.details.reason).toBe("expired");

    const browser = { cookie: cookieOf(first), pageSecret: (first.body as { pageSecret: string }).pageSecret };
    expect((await anonymous.get("/ui/session", {}, asPage(browser))).status).toBe(200);
    // The cookie alone cannot sign the browser out.
    const forged = await anonymous.post("/ui/session/end", {}, { cookie: browser.cookie, ...fromUi() });
    expect([forged.status, forged.headers["set-cookie"]]).toEqual([401, undefined]);
    expect((await anonymous.get("/ui/session", {}, asPage(browser))).status).toBe(200);
    const ended = await anonymous.post("/ui/session/end", {}, asPage(browser));
    expect(ended.body).toEqual({ ended: true });
    expect(String(ended.headers["set-cookie"])).toMatch(
      new RegExp(`^switchyard_session_${lab.registry.environmentId}=; .*Max-Age=0$`),
    );
    expect(((await anonymous.get("/ui/session", {}, asPage(browser))).body as FailureBody).error).toMatchObject({
      code: "invalid_token",
      message: expect.stringContaining("signed out"),
    });
    expect((await anonymous.post("/ui/session/end", {}, asPage(browser))).body).toEqual({ ended: false });

    const second = await signedIn({ token: issue(["orchestration:read"]).token });
    const secondId = (
      sqliteStore(lab.host.store)
        .db.prepare(
          "SELECT credential_id FROM web_sessions WHERE kind = 'session' ORDER BY created_at DESC, rowid DESC LIMIT 1",
        )
        .get() as { credential_id: string }
    ).credential_id;
    expect((await anonymous.get("/ui/session", {}, asPage(second))).status).toBe(200);
    lab.registry.revoke(secondId);
    expect(((await anonymous.get("/ui/session", {}, asPage(second))).body as FailureBody).error.message).toContain(
      "revoked",
    );
  });

  it("lets a bearer token win over a cookie, so a script's requests are never checked as a browser's", async () => {
    const { token } = issue(["orchestration:read"]);
    const answer = await new ApiClient(lab.server.apiUrl, token).get(
      "/ui/session",
      {},
      { cookie: `switchyard_session_${lab.registry.environmentId}=sy_us_garbage`, origin: "http://127.0.0.1:1" },
    );
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ verbs: ["read"], expiresAt: null });
  });

  it("keeps two servers' sessions apart: each cookie has its server's name, so neither overwrites nor answers for the other", async () => {
    const second = await McpLab.start();
    try {
      const here = await signedIn({ token: issue(["orchestration:operate"]).token });
      const secondOrigin = second.server.url;
      const signInThere = await new ApiClient(second.server.apiUrl, null).post(
        "/ui/session",
        { token: second.registry.issueClientToken({ ttlMs: 3_600_000, capabilities: ["orchestration:read"] }).token },
        { origin: secondOrigin, "sec-fetch-site": "same-origin" },
      );
      const there = {
        cookie: cookieOf(signInThere),
        pageSecret: (signInThere.body as { pageSecret: string }).pageSecret,
      };
      expect(here.cookie.split("=")[0]).not.toBe(there.cookie.split("=")[0]);
      // The browser sends both cookies to both servers (cookies ignore ports): each reads its own.
      const bothCookies = `${here.cookie}; ${there.cookie}`;
      expect((await anonymous.get("/ui/session", {}, { ...asPage(here), cookie: bothCookies })).body).toMatchObject({
        verbs: ["read", "operate"],
      });
      const thereAnswer = await new ApiClient(second.server.apiUrl, null).get(
        "/ui/session",
        {},
        { cookie: bothCookies, "x-switchyard-page-secret": there.pageSecret, origin: secondOrigin },
      );
      expect(thereAnswer.body).toMatchObject({ verbs: ["read"] });
      // This server's cookie and page secret mean nothing to the other one.
      const crossed = await new ApiClient(second.server.apiUrl, null).get(
        "/projects",
        {},
        { cookie: here.cookie, "x-switchyard-page-secret": here.pageSecret, origin: secondOrigin },
      );
      expect([crossed.status, (crossed.body as FailureBody).error.code]).toEqual([401, "invalid_token"]);
    } finally {
      await second.stop();
    }
  });
});

describe("web UI sessions over TLS (serve --host with a certificate)", () => {
  let lab: McpLab;
  let scratch: string;
  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), "switchyard-tls-session-"));
    lab = await McpLab.start({ listen: { host: "127.0.0.2", tls: await selfSignedTlsIdentity(scratch, "127.0.0.2") } });
  });
  afterAll(async () => {
    await lab.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  /** One request to the TLS listener (the certificate is self-signed: its name is not what this test checks). */
  function overTls(
    method: string,
    path: string,
    headers: Record<string, string>,
    body?: unknown,
  ): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: any }> {
    const text = body === undefined ? undefined : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = httpsRequest(
        `${lab.server.publicUrl}/api/v1${path}`,
        {
          method,
          rejectUnauthorized: false,
          agent: false,
          headers: {
            ...headers,
            ...(text !== undefined
              ? { "content-type": "application/json", "content-length": String(Buffer.byteLength(text)) }
              : {}),
          },
        },
        (res) => {
          let received = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => (received += chunk));
          res.on("end", () =>
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(received) }),
          );
        },
      );
      req.on("error", reject);
      req.end(text);
    });
  }

  it("sets a __Host- prefixed, Secure cookie over https, which only the https listener reads", async () => {
    const publicOrigin = lab.server.publicUrl;
    const { token } = lab.registry.issueClientToken({ ttlMs: 3_600_000, capabilities: ["orchestration:read"] });
    const answer = await overTls("POST", "/ui/session", { origin: publicOrigin }, { token });
    expect(answer.status).toBe(200);
    const setCookie = String(answer.headers["set-cookie"]);
    expect(setCookie).toMatch(
      new RegExp(
        `^__Host-switchyard_session_${lab.registry.environmentId}=sy_us_[A-Za-z0-9_-]+; Path=/; HttpOnly; SameSite=Strict; Secure; Max-Age=\\d+$`,
      ),
    );
    const cookie = setCookie.split(";")[0]!;
    const pageSecret = (answer.body as { pageSecret: string }).pageSecret;
    expect(
      (await overTls("GET", "/ui/session", { cookie, "x-switchyard-page-secret": pageSecret, origin: publicOrigin }))
        .status,
    ).toBe(200);
    // The same secret under the plain name is not this listener's cookie, and the plain
    // listener does not read the __Host- one.
    const plainName = await overTls("GET", "/ui/session", {
      cookie: cookie.replace(/^__Host-/, ""),
      "x-switchyard-page-secret": pageSecret,
      origin: publicOrigin,
    });
    expect([plainName.status, plainName.body.error.message]).toEqual([
      401,
      expect.stringContaining("Missing Authorization"),
    ]);
    const onPlain = await new ApiClient(lab.server.apiUrl, null).get(
      "/ui/session",
      {},
      { cookie, "x-switchyard-page-secret": pageSecret, origin: lab.server.url },
    );
    expect(onPlain.status).toBe(401);
    // Signing out over https clears the __Host- cookie with the same attributes.
    const ended = await overTls(
      "POST",
      "/ui/session/end",
      { cookie, "x-switchyard-page-secret": pageSecret, origin: publicOrigin },
      {},
    );
    expect(String(ended.headers["set-cookie"])).toMatch(
      /^__Host-switchyard_session_[^=]+=; Path=\/; HttpOnly; SameSite=Strict; Secure; Max-Age=0$/,
    );
  });
});

describe("switchyard ui", () => {
  it("refuses a --url that is not a URL and a project it does not know, saying what to pass", async () => {
    const { runCli } = await import("../support/cli.js");
    const home = mkdtempSync(join(tmpdir(), "switchyard-ui-cli-"));
    const badUrl = await runCli(["ui", "--home", home, "--url", "not a url"]);
    expect([badUrl.code, badUrl.stderr]).toEqual([2, expect.stringContaining("http://127.0.0.1:7410")]);
    // Nothing was issued for it.
    expect((await runCli(["token", "list", "--home", home, "--json"])).stdout.trim()).toBe("[]");
    const unknown = await runCli(["ui", "--home", home, "--projects", "/no/such/folder"]);
    expect([unknown.code, unknown.stderr]).toEqual([3, expect.stringContaining("switchyard project list")]);
    const printed = await runCli(["ui", "--home", home]);
    expect(printed.code).toBe(0);
    expect(printed.stdout.trim()).toMatch(/^http:\/\/127\.0\.0\.1:7410\/#code=sy_uc_[A-Za-z0-9_-]+$/);
    expect(printed.stderr).toContain("works once");
  });
});
