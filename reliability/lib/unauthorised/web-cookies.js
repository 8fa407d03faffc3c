// A web UI session's cookie, replayed without the page's own secret. Browsers do not scope
// cookies by port, so every other web server on 127.0.0.1 the browser visits receives the
// session cookie; that server can replay it with any header it likes (an Origin naming this
// server, Sec-Fetch-Site: same-origin, the CSRF header), but it never sees the per-session
// secret the sign-in answer hands the page alone. Each replay, of a read, the event stream, a
// thread creation and the session read, must be refused. The replay sends every cookie the
// sign-in set, whatever it is named, and nothing else the sign-in answered.
//
// Before issue 28.1 the server honoured the cookie alone for reads, and with a forged Origin and
// the constant CSRF header for changes, and this figure missed; the per-session page secret
// (docs/ui.md, "What the cookie may do") is what makes it hold.
import { api, describeAnswer, served } from "../api.js";
import { issueToken } from "../cli.js";
import { scalar } from "../db.js";

export const COOKIE_FIGURE = "cookie";

/** `name=value` of every cookie an answer sets. */
function cookiesSet(answer) {
  const header = answer.headers?.["set-cookie"] ?? [];
  return (Array.isArray(header) ? header : [header])
    .map((line) => line.split(";")[0].trim())
    .filter((pair) => /^[^=]+=.+$/.test(pair));
}

export async function tryReplayedCookies({ run, home, server, attempts, projectId }) {
  const { token } = await issueToken(run, home, { verbs: "read,operate,approve" });
  const ownOrigin = new URL(server.url).origin;
  // The page's own sign-in: from the UI's origin, as the browser sends it.
  const signIn = await api(server, "POST", "/ui/session", {
    body: { token },
    headers: { origin: ownOrigin, "sec-fetch-site": "same-origin", "x-switchyard-csrf": "1" },
  });
  const cookies = cookiesSet(signIn);
  if (!served(signIn) || cookies.length === 0) {
    attempts.notSetUp(COOKIE_FIGURE, `signing in did not set a session cookie (${describeAnswer(signIn)})`);
    return;
  }
  for (const pair of cookies) run.tokens.add(pair.slice(pair.indexOf("=") + 1));
  const cookie = cookies.join("; ");

  const replays = [
    ["the cookie alone", { cookie }],
    [
      "the cookie with this server's Origin, Sec-Fetch-Site: same-origin and the CSRF header, forged",
      { cookie, origin: ownOrigin, "sec-fetch-site": "same-origin", "x-switchyard-csrf": "1" },
    ],
    [
      "the cookie from another local server's page",
      { cookie, origin: "http://127.0.0.1:3000", "sec-fetch-site": "same-site", "x-switchyard-csrf": "1" },
    ],
  ];
  const requests = [
    { label: "read a project's threads", method: "GET", path: `/threads?projectId=${encodeURIComponent(projectId)}` },
    { label: "open the event stream", method: "GET", path: "/events?after=0", stream: true },
    { label: "read the session", method: "GET", path: "/ui/session" },
    {
      label: "create a thread",
      method: "POST",
      path: "/threads",
      body: {
        projectId,
        threads: [
          { title: "cookie replay thread", prompt: "@@reply replayed", target: { providerInstanceId: "alpha" } },
        ],
      },
    },
  ];
  for (const [how, headers] of replays) {
    for (const request of requests) {
      const answer = await api(server, request.method, request.path, {
        headers,
        body: request.body,
        stream: request.stream,
      });
      attempts.record(
        COOKIE_FIGURE,
        "cookie without the page's secret",
        `${request.label} with ${how}`,
        served(answer),
        describeAnswer(answer),
      );
    }
  }
  const replayed = scalar(home, "SELECT COUNT(*) FROM threads WHERE title = 'cookie replay thread'");
  if (replayed > 0)
    attempts.record(COOKIE_FIGURE, "effects", "threads created with a replayed cookie exist", true, `${replayed}`);
}
