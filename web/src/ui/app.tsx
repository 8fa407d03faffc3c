import { useCallback, useEffect, useLayoutEffect, useState } from "preact/hooks";
import { api, signIn, signOut } from "../api/client.js";
import { forgetPageSecret, onPageSecretGone, pageSecret } from "../api/page-secret.js";
import { ApiError, type SessionView } from "../api/types.js";
import { pendingByThread } from "../model/thread-tree.js";
import { GettingStarted, NewThreadPage } from "./getting-started.js";
import { KeyboardHelp, typingIn } from "./keyboard-help.js";
import { Inbox, ProvidersPage } from "./pages.js";
import { RegistryPage } from "./registry-page.js";
import { SearchPage } from "./search-page.js";
import { navigate, onLinkClick, pathOf, useRoute, type Route } from "./router.js";
import { Sidebar } from "./sidebar.js";
import { SignIn } from "./sign-in.js";
import { ThreadView } from "./thread-view.js";
import { dropEarlyFirstLoad, startFirstLoadEarly } from "./first-load.js";
import { useWorkspace } from "./workspace.js";

/** The one-time code of a `switchyard ui` link, taken out of the address bar at once. */
function takeSignInCode(): string | null {
  const match = /(?:^#|&)code=([^&]+)/.exec(location.hash);
  if (match === null) return null;
  history.replaceState(null, "", location.pathname + location.search);
  return decodeURIComponent(match[1]!);
}

type SessionState =
  | { readonly state: "checking" }
  | { readonly state: "signed-out"; readonly problem: string | null }
  | { readonly state: "signed-in"; readonly session: SessionView };

export function App() {
  const [session, setSession] = useState<SessionState>({ state: "checking" });
  // A layout effect: the check starts as the page mounts, not a frame later after the first paint.
  useLayoutEffect(() => {
    const code = takeSignInCode();
    // Without its page secret this page cannot use a session, whatever cookie the browser holds.
    const held = pageSecret();
    if (code === null && held === null) {
      setSession({ state: "signed-out", problem: null });
      return;
    }
    const check = code !== null ? signIn({ code }) : api<SessionView>("GET", "/ui/session");
    // A page that holds its secret starts its first reads (the stream, the projects, then their
    // threads) beside the check, not after it. The signed-in page renders once the project list
    // is there too: its first render then has what it shows, and the threads' request, asked for
    // as the project list lands, does not wait behind that render on a busy main thread.
    const first = code === null ? startFirstLoadEarly() : null;
    const ready =
      first === null ? check : Promise.all([check, first.projects.catch(() => null)]).then(([view]) => view);
    ready
      .then((view) => setSession({ state: "signed-in", session: view }))
      .catch((failure: unknown) => {
        dropEarlyFirstLoad();
        if (code === null && failure instanceof ApiError && failure.status === 401) forgetPageSecret(held!);
        setSession({
          state: "signed-out",
          problem: code !== null && failure instanceof ApiError ? failure.message : null,
        });
      });
  }, []);
  // Another tab signed out: so is this one (they share the session).
  useEffect(
    () => onPageSecretGone(() => setSession({ state: "signed-out", problem: "Signed out in another tab." })),
    [],
  );
  if (session.state === "checking") return <p class="hint boot">Loading…</p>;
  if (session.state === "signed-out")
    return (
      <SignIn problem={session.problem} onSignedIn={(view) => setSession({ state: "signed-in", session: view })} />
    );
  return (
    <SignedIn
      session={session.session}
      onSignedOut={() => setSession({ state: "signed-out", problem: "The session ended; sign in again." })}
    />
  );
}

function NavLink(props: {
  readonly route: Route;
  readonly current: Route;
  readonly label: string;
  readonly count?: number;
}) {
  const active = props.current.page === props.route.page;
  return (
    <a
      href={pathOf(props.route)}
      onClick={onLinkClick(props.route)}
      aria-current={active ? "page" : undefined}
      class="nav-link"
    >
      {props.label}
      {props.count !== undefined && props.count > 0 && (
        <span class="count attention" aria-label={`${props.count} waiting`}>
          {props.count}
        </span>
      )}
    </a>
  );
}

function SignedIn(props: { readonly session: SessionView; readonly onSignedOut: () => void }) {
  const route = useRoute();
  const onSignedOut = useCallback(props.onSignedOut, []);
  const workspace = useWorkspace(onSignedOut);
  const pending = pendingByThread(workspace.requests.values());
  // What a thread's page opens with (a new fork's or thread's notice): kept while its page is open, then dropped.
  const [notices, setNotices] = useState<ReadonlyMap<string, string>>(new Map());
  const [drawerOpen, setDrawerOpen] = useState(false);
  const [helpOpen, setHelpOpen] = useState(false);
  // Single keys act only outside text fields; the Ctrl ones (send, stop) belong to their screens.
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.ctrlKey || event.metaKey || event.altKey || typingIn(event.target)) return;
      if (event.key === "?") {
        event.preventDefault();
        setHelpOpen(true);
      } else if (event.key === "n") {
        event.preventDefault();
        navigate({ page: "new", projectId: null });
      } else if (event.key === "/") {
        event.preventDefault();
        const field = document.querySelector<HTMLInputElement>("#thread-filter");
        if (field !== null && field.offsetParent !== null) field.focus();
        else {
          // Below 700 px the sidebar is a drawer: open it, then focus the field (after the drawer focused its Close button).
          setDrawerOpen(true);
          setTimeout(() => document.querySelector<HTMLInputElement>("#thread-filter")?.focus(), 50);
        }
      }
    };
    addEventListener("keydown", onKey);
    return () => removeEventListener("keydown", onKey);
  }, []);
  useEffect(() => {
    const open = route.page === "thread" ? route.threadId : null;
    setNotices((map) =>
      open !== null && map.has(open) ? new Map([[open, map.get(open)!]]) : map.size === 0 ? map : new Map(),
    );
    // Going somewhere closes the drawer: the page it opened is what the person wanted.
    setDrawerOpen(false);
  }, [route]);
  useEffect(() => {
    if (!drawerOpen) return;
    const onKey = (event: KeyboardEvent) => {
      if (event.key === "Escape") setDrawerOpen(false);
    };
    addEventListener("keydown", onKey);
    // A drawer opened by its button takes the focus, so the keyboard lands in it.
    document.querySelector<HTMLElement>("#sidebar .drawer-close")?.focus();
    return () => removeEventListener("keydown", onKey);
  }, [drawerOpen]);
  const opened = (threadId: string, notice: string) => {
    setNotices((map) => new Map(map).set(threadId, notice));
    void workspace.refreshThread(threadId);
    navigate({ page: "thread", threadId });
  };
  // The project list counts each project's threads: the page knows before they are read.
  const setUp = workspace.threads.size > 0 || workspace.projects.some((project) => project.threadCount > 0);
  const leave = async () => {
    await signOut().catch(() => undefined);
    props.onSignedOut();
  };
  return (
    <div class="app">
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="top-bar">
        <button
          type="button"
          class="drawer-toggle"
          aria-expanded={drawerOpen}
          aria-controls="sidebar"
          onClick={() => setDrawerOpen(!drawerOpen)}
        >
          <span aria-hidden="true">☰</span> Threads
        </button>
        <a href="/" onClick={onLinkClick({ page: "home" })} class="brand">
          Switchyard
        </a>
        <nav aria-label="Pages" class="pages">
          <NavLink route={{ page: "new", projectId: null }} current={route} label="New thread" />
          <NavLink route={{ page: "inbox" }} current={route} label="Needs a person" count={workspace.requests.size} />
          <NavLink route={{ page: "providers" }} current={route} label="Providers" />
          <NavLink route={{ page: "registry" }} current={route} label="Registry" />
        </nav>
        <span class={`stream stream-${workspace.stream}`} role="status" aria-live="polite">
          {workspace.stream === "live" ? "live" : workspace.stream}
        </span>
        <span class="verbs" title="What this session may do">
          {props.session.verbs.join(" · ")}
        </span>
        <button type="button" class="shortcuts" onClick={() => setHelpOpen(true)} title="Keyboard shortcuts (?)">
          ?<span class="visually-hidden"> Keyboard shortcuts</span>
        </button>
        <button type="button" class="sign-out" onClick={() => void leave()}>
          Sign out
        </button>
      </header>
      <KeyboardHelp open={helpOpen} onClose={() => setHelpOpen(false)} />
      <div class="body">
        <Sidebar
          projects={workspace.projects}
          threads={workspace.threads}
          threadsLoaded={workspace.threadsLoaded}
          pending={pending}
          currentThreadId={route.page === "thread" ? route.threadId : null}
          drawerOpen={drawerOpen}
          onCloseDrawer={() => setDrawerOpen(false)}
        />
        {workspace.error !== null ? (
          <main id="main" class="page">
            <p class="error">{workspace.error}</p>
          </main>
        ) : route.page === "thread" ? (
          <ThreadView
            key={route.threadId}
            threadId={route.threadId}
            workspace={workspace}
            session={props.session}
            pending={pending}
            notice={notices.get(route.threadId) ?? null}
            onOpened={opened}
          />
        ) : route.page === "providers" ? (
          <ProvidersPage />
        ) : route.page === "search" ? (
          <SearchPage query={route.query} projects={workspace.projects} />
        ) : route.page === "registry" ? (
          <RegistryPage session={props.session} />
        ) : route.page === "new" ? (
          <NewThreadPage workspace={workspace} session={props.session} projectId={route.projectId} onStarted={opened} />
        ) : route.page === "inbox" || workspace.requests.size > 0 ? (
          <Inbox workspace={workspace} session={props.session} />
        ) : workspace.loading ? (
          <main id="main" class="page">
            <p class="hint">Loading…</p>
          </main>
        ) : setUp ? (
          <NewThreadPage workspace={workspace} session={props.session} projectId={null} onStarted={opened} />
        ) : (
          <GettingStarted workspace={workspace} session={props.session} onStarted={opened} />
        )}
      </div>
    </div>
  );
}
