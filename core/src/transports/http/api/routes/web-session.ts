import { z } from "zod";
import { ApiFailure } from "../api-errors.js";
import { defineRoute } from "../api-route.js";
import type { Caller } from "../../../../services/caller.js";
import type { IssuedWebSession, SignInRejection } from "../../../../services/credentials/web-sessions.js";
import {
  checkSameOrigin,
  clearedSessionCookie,
  PAGE_SECRET_HEADER,
  readPageSecret,
  readSessionCookie,
  requestOrigin,
  sessionCookie,
  webSessionRefused,
} from "../web-session-cookie.js";
import { callerFromScope } from "../../../caller-from-scope.js";

const SignInBody = z
  .object({
    token: z
      .string()
      .min(1)
      .max(500)
      .optional()
      .describe("A client token (switchyard token issue), pasted once; it is not kept by the browser."),
    code: z.string().min(1).max(500).optional().describe("The one-time code from the link `switchyard ui` prints."),
  })
  .strict();

/** Who the browser acts as: the token's verbs, projects and ceiling. */
const SessionView = z.object({
  verbs: z.array(z.enum(["read", "operate", "approve", "install"])),
  projects: z.union([z.literal("*"), z.array(z.string())]).describe('The projects it may use ("*": every project).'),
  ceiling: z.object({ runtimeMode: z.string(), interactionMode: z.string() }).nullable(),
  expiresAt: z.string().nullable().describe("When the browser session ends (null when read with a bearer token)."),
});

/** The sign-in answer: the session, and the page secret only this answer ever carries. */
const SignedInView = SessionView.extend({
  pageSecret: z
    .string()
    .describe(
      `The session's page secret: send it in the ${PAGE_SECRET_HEADER} header with every request the cookie authenticates. Keep it in storage scoped to the page's origin (never a cookie, never a URL); no endpoint returns it again, and the cookie alone authorises nothing.`,
    ),
});

const VERB_OF = {
  "orchestration:read": "read",
  "orchestration:operate": "operate",
  "orchestration:approve": "approve",
  "orchestration:install": "install",
} as const;

function viewOf(caller: Caller, expiresAtMs: number | null) {
  return {
    verbs: [...caller.capabilities].map((capability) => VERB_OF[capability]),
    projects: caller.projects === "*" ? ("*" as const) : [...(caller.projects as readonly string[])],
    ceiling: caller.ceiling ?? null,
    expiresAt: expiresAtMs === null ? null : new Date(expiresAtMs).toISOString(),
  };
}

const REFUSALS: Record<SignInRejection, string> = {
  unknown: "That token or code is not known to this server.",
  expired: "That token or code has expired; issue a new one (switchyard token issue, or run switchyard ui again).",
  idle_expired: "That token expired while idle; issue a new one.",
  revoked: "That token was revoked; issue a new one (switchyard token issue).",
  code_used: "That sign-in link was already used; run switchyard ui again for a new one.",
  not_a_client_token: "That is an agent's credential; sign in with a client token (switchyard token issue).",
};

export const signInRoute = defineRoute({
  method: "POST",
  path: "/ui/session",
  operationId: "signInToWebUi",
  summary: "Sign the web UI in with a token or a one-time code; sets the session cookie and answers the page secret",
  description: `For the browser: exchanges a client token, or the one-time code of the link \`switchyard ui\` prints, for a session that acts with the token's verbs, projects and ceiling. The session is two secrets, both needed on every request: an HttpOnly, SameSite=Strict cookie named for this server (switchyard_session_<environmentId>; over TLS __Host-…, Secure), which the browser sends to every server on the same host name, and the page secret in this answer, which the page sends in ${PAGE_SECRET_HEADER}. The session answers only at the origin it signed in at. Only from the UI's own origin (Origin required). A code works once.`,
  tag: "web-ui",
  requires: null,
  body: SignInBody,
  input: SignInBody,
  output: SignedInView,
  outputName: "SignedInWebSession",
  handle: async (input, { services, request, response }) => {
    checkSameOrigin(request, true);
    const origin = requestOrigin(request);
    if ((input.token === undefined) === (input.code === undefined)) {
      throw new ApiFailure("invalid_request", "Send exactly one of token and code.", { field: "body" });
    }
    const signedIn: IssuedWebSession | { rejection: SignInRejection } =
      input.token !== undefined
        ? await services.webSessions.signInWithToken(input.token, origin)
        : await services.webSessions.signInWithCode(input.code!, origin);
    if ("rejection" in signedIn) {
      throw new ApiFailure("invalid_token", REFUSALS[signedIn.rejection], { reason: signedIn.rejection }, 401);
    }
    response.setHeader(
      "set-cookie",
      sessionCookie(request, services.environmentId, signedIn.secret, signedIn.expiresAtMs, Date.now()),
    );
    return { ...viewOf(callerFromScope(signedIn.scope, "api"), signedIn.expiresAtMs), pageSecret: signedIn.pageSecret };
  },
});

export const readSessionRoute = defineRoute({
  method: "GET",
  path: "/ui/session",
  operationId: "readWebUiSession",
  summary: "Who the caller acts as: verbs, projects and ceiling",
  tag: "web-ui",
  requires: "orchestration:read",
  input: z.object({}).strict(),
  output: SessionView,
  outputName: "WebSession",
  handle: (_input, { caller }) => viewOf(caller, null),
});

export const signOutRoute = defineRoute({
  method: "POST",
  path: "/ui/session/end",
  operationId: "signOutOfWebUi",
  summary: "Sign the web UI out: ends the session and clears its cookie",
  description: `Needs the session's page secret (${PAGE_SECRET_HEADER}) like every other request the cookie makes: a cookie captured by another server cannot sign the browser out.`,
  tag: "web-ui",
  requires: null,
  input: z.object({}).strict(),
  output: z.object({ ended: z.boolean() }),
  outputName: "WebSessionEnded",
  handle: async (_input, { services, request, response }) => {
    checkSameOrigin(request, true);
    const secret = readSessionCookie(request, services.environmentId);
    if (secret === null) {
      response.setHeader("set-cookie", clearedSessionCookie(request, services.environmentId));
      return { ended: false };
    }
    const outcome = await services.webSessions.end({
      secret,
      pageSecret: readPageSecret(request),
      origin: requestOrigin(request),
    });
    if ("rejection" in outcome) throw webSessionRefused(outcome.rejection, requestOrigin(request));
    response.setHeader("set-cookie", clearedSessionCookie(request, services.environmentId));
    return outcome;
  },
});
