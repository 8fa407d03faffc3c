import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSessions } from "../../src/services/credentials/web-sessions.js";
import { ApiClient, type ApiAnswer, type FailureBody } from "../support/api-client.js";
import { McpLab } from "../support/mcp-lab.js";

/**
 * The web UI's session: a token (or a one-time code) becomes an HttpOnly, SameSite=Strict
 * cookie that acts with exactly the token's verbs, projects and ceiling, honoured only from the
 * UI's own origin, and for changes only with the CSRF header.
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
    fromUi = { origin, "sec-fetch-site": "same-origin", "x-switchyard-csrf": "1" };
  });
  afterAll(async () => lab.stop());

  const issue = (capabilities: ("orchestration:read" | "orchestration:operate" | "orchestration:approve")[], extra: { projects?: string[] } = {}) =>
    lab.registry.issueClientToken({ ttlMs: 3_600_000, capabilities, ceiling: { runtimeMode: "approval-required", interactionMode: "default" }, ...extra });

  /** What the UI's own fetches send. */
  let fromUi: Record<string, string>;

  async function signIn(body: Record<string, string>, headers?: Record<string, string>): Promise<ApiAnswer> {
    return anonymous.post("/ui/session", body, headers ?? fromUi);
  }

  function cookieOf(answer: ApiAnswer): string {
    const header = answer.headers["set-cookie"];
    const value = (Array.isArray(header) ? header[0] : header) ?? "";
    return value.split(";")[0]!;
  }

  it("sets an HttpOnly, SameSite=Strict cookie that acts with the token's verbs and projects", async () => {
    const other = lab.host.projects.add(mkdtempSync(join(tmpdir(), "switchyard-other-")), "other");
    const { token } = issue(["orchestration:operate"], { projects: [lab.projectId] });
    const answer = await signIn({ token });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ verbs: ["read", "operate"], projects: [lab.projectId], ceiling: { runtimeMode: "approval-required", interactionMode: "default" } });
    const setCookie = String(answer.headers["set-cookie"]);
    expect(setCookie).toMatch(/^switchyard_session=sy_us_[A-Za-z0-9_-]+; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+$/);
    expect(setCookie).not.toContain(token);
    const cookie = cookieOf(answer);

    const projects = await anonymous.get("/projects", {}, { cookie, origin });
    expect(projects.status).toBe(200);
    expect((projects.body as { projects: { projectId: string }[] }).projects.map((p) => p.projectId)).toEqual([lab.projectId]);
    const elsewhere = await anonymous.get("/threads", { projectId: other.id }, { cookie, origin });
    expect(elsewhere.status).toBe(403);
    // The ceiling holds too: no broader work than the token may start.
    const broader = await anonymous.post(
      "/threads",
      { projectId: lab.projectId, threads: [{ title: "x", runtimeMode: "full-access", target: { providerInstanceId: "alpha" } }] },
      { cookie, ...fromUi },
    );
    expect([broader.status, (broader.body as FailureBody).error.code]).toEqual([403, "runtime_mode_escalation_denied"]);
    // Only hashes are stored.
    const rows = lab.host.store.db.prepare("SELECT * FROM web_sessions").all() as Record<string, unknown>[];
    expect(JSON.stringify(rows)).not.toContain(cookie.split("=")[1]!);
  });

  it("refuses a change made with the cookie without the CSRF header, from another origin, or as a cross-site fetch; reads need the origin too", async () => {
    const { token } = issue(["orchestration:operate"]);
    const cookie = cookieOf(await signIn({ token }));
    const create = (headers: Record<string, string>) =>
      anonymous.post("/threads", { projectId: lab.projectId, threads: [{ title: "from the cookie", target: { providerInstanceId: "alpha" } }] }, { cookie, ...headers });
    const refusals: Record<string, unknown> = {};
    const cases: Record<string, Record<string, string>> = {
      "no CSRF header": { origin, "sec-fetch-site": "same-origin" },
      "no Origin": { "x-switchyard-csrf": "1" },
      "another loopback port (same site)": { origin: "http://127.0.0.1:1", "x-switchyard-csrf": "1" },
      "same-site fetch": { origin, "sec-fetch-site": "same-site", "x-switchyard-csrf": "1" },
      "cross-site fetch": { origin, "sec-fetch-site": "cross-site", "x-switchyard-csrf": "1" },
    };
    for (const [name, headers] of Object.entries(cases)) {
      const answer = await create(headers);
      refusals[name] = [answer.status, (answer.body as FailureBody).error?.code];
    }
    const read = await anonymous.get("/projects", {}, { cookie, origin: "http://localhost:1" });
    refusals["read from another origin"] = [read.status, (read.body as FailureBody).error?.code];
    expect(refusals).toEqual(Object.fromEntries([...Object.keys(cases), "read from another origin"].map((name) => [name, [403, "cross_origin_refused"]])));
    expect(lab.host.store.select("thread", "1 = 1").filter((t) => t.title === "from the cookie")).toEqual([]);

    const made = await create(fromUi);
    expect(made.status).toBe(201);
    // A same-origin Origin in another case of the Host is still the UI's own.
    expect((await anonymous.get("/projects", {}, { cookie, origin: `http://${host.toUpperCase()}` })).status).toBe(200);
  });

  it("signs in only from the UI's own origin with the CSRF header, never with an agent's credential", async () => {
    const { token } = issue(["orchestration:read"]);
    expect(((await signIn({ token }, { origin: "http://127.0.0.1:1", "x-switchyard-csrf": "1" })).body as FailureBody).error.code).toBe("cross_origin_refused");
    expect(((await signIn({ token }, { origin })).body as FailureBody).error.code).toBe("cross_origin_refused");
    const agent = await lab.liveAgent({ title: "an agent" });
    const refused = await signIn({ token: await lab.tokenFor(agent.threadId) });
    expect([refused.status, (refused.body as FailureBody).error.details.reason]).toEqual([401, "not_a_client_token"]);
    agent.release();
    const unknown = await signIn({ token: "sy_not-a-token-at-all-000000" });
    expect([unknown.status, (unknown.body as FailureBody).error.code]).toEqual([401, "invalid_token"]);
    expect((await signIn({ token, code: "x" })).status).toBe(400);
  });

  it("spends a one-time code once, refuses an expired one, and ends sessions with their token or at sign-out", async () => {
    const issued = issue(["orchestration:read", "orchestration:approve"]);
    const sessions = lab.host.container.resolve(WebSessions);
    const { code } = sessions.issueCode(issued.id);
    const first = await signIn({ code });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ verbs: ["read", "approve"] });
    const again = await signIn({ code });
    expect([again.status, (again.body as FailureBody).error.details.reason]).toEqual([401, "code_used"]);

    const stale = sessions.issueCode(issued.id);
    lab.host.store.db.prepare("UPDATE web_sessions SET expires_at = 0 WHERE kind = 'code' AND ended_at IS NULL").run();
    expect(((await signIn({ code: stale.code })).body as FailureBody).error.details.reason).toBe("expired");

    const cookie = cookieOf(first);
    expect((await anonymous.get("/ui/session", {}, { cookie, origin })).status).toBe(200);
    const ended = await anonymous.post("/ui/session/end", {}, { cookie, ...fromUi });
    expect(ended.body).toEqual({ ended: true });
    expect(String(ended.headers["set-cookie"])).toContain("Max-Age=0");
    expect(((await anonymous.get("/ui/session", {}, { cookie, origin })).body as FailureBody).error).toMatchObject({
      code: "invalid_token",
      message: expect.stringContaining("signed out"),
    });

    const second = cookieOf(await signIn({ token: issue(["orchestration:read"]).token }));
    const secondId = (
      lab.host.store.db.prepare("SELECT credential_id FROM web_sessions WHERE kind = 'session' ORDER BY created_at DESC, rowid DESC LIMIT 1").get() as { credential_id: string }
    ).credential_id;
    expect((await anonymous.get("/ui/session", {}, { cookie: second, origin })).status).toBe(200);
    lab.registry.revoke(secondId);
    expect(((await anonymous.get("/ui/session", {}, { cookie: second, origin })).body as FailureBody).error.message).toContain("revoked");
  });

  it("lets a bearer token win over a cookie, so a script's requests are never checked as a browser's", async () => {
    const { token } = issue(["orchestration:read"]);
    const answer = await new ApiClient(lab.server.apiUrl, token).get("/ui/session", {}, { cookie: "switchyard_session=sy_us_garbage", origin: "http://127.0.0.1:1" });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ verbs: ["read"], expiresAt: null });
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
