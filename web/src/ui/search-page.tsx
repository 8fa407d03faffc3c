import { useEffect, useState } from "preact/hooks";
import { api } from "../api/client.js";
import { ApiError, type Project, type ThreadSearch, type ThreadSearchHit } from "../api/types.js";
import { relativeTime } from "../model/item-display.js";
import { matchedInLabel, snippetPieces } from "../model/search-snippet.js";
import { navigate, onLinkClick, pathOf } from "./router.js";

/** Results one request asks for (the server answers at most 50). */
const PAGE_SIZE = 20;

/** The longest query the server takes. */
const MAX_QUERY_CHARS = 200;

function Snippet(props: { readonly hit: ThreadSearchHit }) {
  return (
    <p class="snippet">
      {snippetPieces(props.hit.snippet.text, props.hit.snippet.highlights).map((piece, index) =>
        piece.matched ? <mark key={index}>{piece.text}</mark> : piece.text,
      )}
    </p>
  );
}

function ResultRow(props: { readonly hit: ThreadSearchHit; readonly nowMs: number }) {
  const { thread } = props.hit;
  const route = { page: "thread", threadId: thread.threadId } as const;
  return (
    <li>
      <a href={pathOf(route)} onClick={onLinkClick(route)} class="search-result" data-thread-id={thread.threadId}>
        <span class="search-result-head">
          <span class="thread-title">{thread.title || "Untitled"}</span>
          <span class="search-where">{matchedInLabel(props.hit.matchedIn)}</span>
          <span class="when" title={`last activity ${thread.updatedAt}`}>
            {relativeTime(thread.updatedAt, props.nowMs)}
          </span>
        </span>
        <Snippet hit={props.hit} />
      </a>
    </li>
  );
}

type ProjectSearch =
  | { readonly state: "loading"; readonly hits: readonly ThreadSearchHit[] }
  | { readonly state: "done"; readonly hits: readonly ThreadSearchHit[]; readonly nextOffset: number | null }
  | { readonly state: "failed"; readonly hits: readonly ThreadSearchHit[]; readonly message: string };

/** One project's matches, a page at a time (the server ranks them; "More" asks for the next page). */
function ProjectResults(props: { readonly project: Project; readonly query: string; readonly nowMs: number }) {
  const [search, setSearch] = useState<ProjectSearch>({ state: "loading", hits: [] });
  const load = (offset: number, before: readonly ThreadSearchHit[], signal?: AbortSignal) => {
    setSearch({ state: "loading", hits: before });
    const params = new URLSearchParams({
      projectId: props.project.projectId,
      q: props.query,
      limit: String(PAGE_SIZE),
      offset: String(offset),
    });
    api<ThreadSearch>("GET", `/threads/search?${params.toString()}`, undefined, signal)
      .then((page) => setSearch({ state: "done", hits: [...before, ...page.results], nextOffset: page.nextOffset }))
      .catch((failure: unknown) => {
        if (signal?.aborted === true) return;
        setSearch({
          state: "failed",
          hits: before,
          message: failure instanceof ApiError ? failure.message : "The search did not reach the server.",
        });
      });
  };
  useEffect(() => {
    const controller = new AbortController();
    load(0, [], controller.signal);
    return () => controller.abort();
  }, [props.project.projectId, props.query]);
  const titleId = `search-project-${props.project.projectId}`;
  return (
    <section class="search-project" aria-labelledby={titleId} data-project-id={props.project.projectId}>
      <h2 id={titleId}>{props.project.name}</h2>
      {search.hits.length > 0 && (
        <ul class="search-results">
          {search.hits.map((hit) => (
            <ResultRow key={hit.thread.threadId} hit={hit} nowMs={props.nowMs} />
          ))}
        </ul>
      )}
      {search.state === "loading" ? (
        <p class="hint">Searching…</p>
      ) : search.state === "failed" ? (
        <p class="error">{search.message}</p>
      ) : search.hits.length === 0 ? (
        <p class="empty">No thread here mentions it.</p>
      ) : (
        search.nextOffset !== null && (
          <button type="button" onClick={() => load(search.nextOffset!, search.hits)}>
            More
          </button>
        )
      )}
    </section>
  );
}

/**
 * Search: every project's threads whose title or messages (not tool output) hold each word of
 * the query, best match first, with the words around the match. The server searches (FTS5);
 * the page only shows what it answers.
 */
export function SearchPage(props: { readonly query: string; readonly projects: readonly Project[] }) {
  const [text, setText] = useState(props.query);
  useEffect(() => setText(props.query), [props.query]);
  const query = props.query.trim();
  const nowMs = Date.now();
  return (
    <main class="page search-page" id="main" aria-labelledby="search-title">
      <h1 id="search-title">Search threads</h1>
      <form
        role="search"
        class="search-form"
        onSubmit={(event) => {
          event.preventDefault();
          if (text.trim() !== "") navigate({ page: "search", query: text.trim() });
        }}
      >
        <label for="search-query">Words in a thread's title or messages</label>
        <input
          id="search-query"
          type="search"
          value={text}
          maxLength={MAX_QUERY_CHARS}
          onInput={(event) => setText((event.target as HTMLInputElement).value)}
        />
        <button type="submit">Search</button>
      </form>
      {query === "" ? (
        <p class="hint">Type words to find; every one must match, the last also as the start of a word.</p>
      ) : props.projects.length === 0 ? (
        <p class="empty">No projects to search.</p>
      ) : (
        props.projects.map((project) => (
          <ProjectResults key={project.projectId} project={project} query={query} nowMs={nowMs} />
        ))
      )}
    </main>
  );
}
