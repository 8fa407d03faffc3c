import { z } from "zod";
import { ApiFailure } from "../api-errors.js";
import { defineRoute } from "../api-route.js";
import type { Caller } from "../../../../services/caller.js";
import type { IssuedWebSession, WebSessionRejection } from "../../../../services/credentials/web-sessions.js";
import { checkSameOrigin, clearedSessionCookie, readSessionCookie, sessionCookie } from "../web-session-cookie.js";
import { callerFromScope } from "../../../mcp/caller-from-scope.js";

const SignInBody = z
  .object({
    token: z.string().min(1).max(500).optional().describe("A client token (switchyard token issue), pasted once; it is not kept by the browser."),
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

const VERB_OF = { "orchestration:read": "read", "orchestration:operate": "operate", "orchestration:approve": "approve", "orchestration:install": "install" } as const;

function viewOf(caller: Caller, expiresAtMs: number | null) {
  return {
    verbs: [...caller.capabilities].map((capability) => VERB_OF[capability]),
    projects: caller.projects === "*" ? ("*" as const) : [...(caller.projects as readonly string[])],
    ceiling: caller.ceiling ?? null,
    expiresAt: expiresAtMs === null ? null : new Date(expiresAtMs).toISOString(),
  };
}

const REFUSALS: Record<WebSessionRejection | "not_a_client_token", string> = {
  unknown: "That token or code is not known to this server.",
  expired: "That token or code has expired; issue a new one (switchyard token issue, or run switchyard ui again).",
  idle_expired: "That token expired while idle; issue a new one.",
  revoked: "That token was revoked; issue a new one (switchyard token issue).",
  code_used: "That sign-in link was already used; run switchyard ui again for a new one.",
  session_ended: "That session was signed out.",
  not_a_client_token: "That is an agent's credential; sign in with a client token (switchyard token issue).",
};

export const signInRoute = defineRoute({
  method: "POST",
  path: "/ui/session",
  operationId: "signInToWebUi",
  summary: "Sign the web UI in with a token or a one-time code; sets the session cookie",
  description:
    "For the browser: exchanges a client token, or the one-time code of the link `switchyard ui` prints, for an HttpOnly, SameSite=Strict session cookie that acts with the token's verbs, projects and ceiling. Only from the UI's own origin, with the x-switchyard-csrf: 1 header. A code works once.",
  tag: "web-ui",
  requires: null,
  body: SignInBody,
  input: SignInBody,
  output: SessionView,
  outputName: "WebSession",
  handle: (input, { services, request, response }) => {
    checkSameOrigin(request, true);
    if ((input.token === undefined) === (input.code === undefined)) {
      throw new ApiFailure("invalid_request", "Send exactly one of token and code.", { field: "body" });
    }
    const signedIn: IssuedWebSession | { rejection: WebSessionRejection | "not_a_client_token" } =
      input.token !== undefined ? services.webSessions.signInWithToken(input.token) : services.webSessions.signInWithCode(input.code!);
    if ("rejection" in signedIn) {
      throw new ApiFailure("invalid_token", REFUSALS[signedIn.rejection], { reason: signedIn.rejection }, 401);
    }
    response.setHeader("set-cookie", sessionCookie(signedIn.secret, signedIn.expiresAtMs, Date.now()));
    return viewOf(callerFromScope(signedIn.scope, "api"), signedIn.expiresAtMs);
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
  tag: "web-ui",
  requires: null,
  input: z.object({}).strict(),
  output: z.object({ ended: z.boolean() }),
  outputName: "WebSessionEnded",
  handle: (_input, { services, request, response }) => {
    checkSameOrigin(request, true);
    const secret = readSessionCookie(request);
    response.setHeader("set-cookie", clearedSessionCookie());
    return { ended: secret !== null && services.webSessions.end(secret) };
  },
});
