import { OrchestratorFailure } from "../engine/orchestrator-failure.js";

/** `switchyard-thread://v2/<environmentId>/<threadId>`: how agents and people mention a thread. */
const THREAD_LINK = /^switchyard-thread:\/\/v2\/([^/]+)\/([^/]+)$/;
/** The web UI's thread page, as web/src/ui/router.ts routes it. */
const THREAD_PAGE = /^\/threads\/([^/]+)\/?$/;

/** What decides whether a link or a web URL names a thread of this environment. */
export interface ThreadReferenceScope {
  readonly environmentId: string;
  /** Where this server's web UI is served (`server.webUrl`, the bound addresses), without a trailing slash. */
  readonly webBases: readonly string[];
}

/** The accepted forms, for messages that refuse a value. */
const ACCEPTED_FORMS =
  "a thread id, its link switchyard-thread://v2/<environmentId>/<threadId>, or its web UI URL <server>/threads/<threadId>";

/** A thread id in a web UI path: its colons stay readable (web/src/ui/router.ts builds it the same way). */
export function threadPathSegment(threadId: string): string {
  return encodeURIComponent(threadId).replace(/%3A/gi, ":");
}

function malformed(value: string, field: string, why: string): OrchestratorFailure {
  return new OrchestratorFailure(
    "invalid_request",
    `${field} ${JSON.stringify(value)} ${why}; pass ${ACCEPTED_FORMS}.`,
    { field, value },
  );
}

function decodedSegment(value: string, segment: string, field: string): string {
  try {
    const id = decodeURIComponent(segment);
    if (id !== "") return id;
  } catch {
    // Refused below, with the accepted forms.
  }
  throw malformed(value, field, "does not name a thread id (its id is not valid percent-encoding)");
}

function fromLink(value: string, field: string, scope: ThreadReferenceScope): string {
  const match = THREAD_LINK.exec(value);
  if (match === null) throw malformed(value, field, "is not a thread link");
  if (match[1] !== scope.environmentId) {
    throw new OrchestratorFailure(
      "invalid_request",
      `${field} ${JSON.stringify(value)} is a thread of environment ${match[1]}, not of this one (${scope.environmentId}); to act on it there, pass its thread id with environmentId ${JSON.stringify(match[1])} (orchestrator_capabilities lists the linked environments).`,
      { field, value, environmentId: match[1], reason: "other_environment" },
    );
  }
  return decodedSegment(value, match[2]!, field);
}

function fromWebUrl(value: string, field: string, scope: ThreadReferenceScope): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw malformed(value, field, "is not a valid URL");
  }
  if (url.username !== "" || url.password !== "") {
    // Never echo credentials into an answer or a log: name the URL without them.
    url.username = "";
    url.password = "";
    throw malformed(url.href, field, "carries credentials, which a thread page's URL never does");
  }
  if (url.search !== "" || url.hash !== "") throw malformed(value, field, "is not a thread page of the web UI");
  // A URL is a thread of ours only under our own base: the same path on another server names its thread.
  for (const base of scope.webBases.map((each) => new URL(each))) {
    const prefix = base.pathname.replace(/\/$/, "");
    if (url.origin !== base.origin || !url.pathname.startsWith(`${prefix}/`)) continue;
    const page = THREAD_PAGE.exec(url.pathname.slice(prefix.length));
    if (page === null) throw malformed(value, field, "is not a thread page of the web UI");
    return decodedSegment(value, page[1]!, field);
  }
  throw new OrchestratorFailure(
    "invalid_request",
    `${field} ${JSON.stringify(value)} is not a page of this server's web UI (${scope.webBases.join(", ") || "it serves none"}); pass the thread id or its switchyard-thread:// link (another environment's thread: its id, with environmentId).`,
    { field, value, origin: url.origin, reason: "other_origin" },
  );
}

/**
 * The thread id a `threadId`-like input names: the id itself, the thread's link
 * (`switchyard-thread://v2/<environmentId>/<threadId>`) or its web UI URL (`<base>/threads/<id>`).
 * A link of another environment, or a URL of another origin, is refused (`invalid_request`, with
 * `details.field`): that thread is not this environment's.
 */
export function threadIdOfReference(value: string, field: string, scope: ThreadReferenceScope): string {
  if (value.startsWith("switchyard-thread:")) return fromLink(value, field, scope);
  if (/^https?:\/\//i.test(value)) return fromWebUrl(value, field, scope);
  return value;
}
