import type { RefObject } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import type { Project, ThreadRow } from "../api/types.js";
import { relativeTime } from "../model/item-display.js";
import {
  badgeOf,
  childrenByParent,
  groupByParent,
  ordered,
  sidebarSections,
  type SidebarOrder,
} from "../model/thread-tree.js";
import { loadOpenSections, saveOpenSections, type SectionName } from "../model/section-memory.js";
import {
  isFiltering,
  matchesFilter,
  NO_FILTER,
  providersOf,
  statusFilterOf,
  STATUS_FILTERS,
  type ThreadFilter,
} from "../model/thread-filter.js";
import { navigate, onLinkClick, pathOf, type Route } from "./router.js";
import { WindowedList, type RowPlace } from "./windowed-list.js";

const storage = typeof localStorage === "undefined" ? null : localStorage;
const ORDER_KEY = "switchyard.sidebarOrder";

function loadOrder(): SidebarOrder {
  try {
    return storage?.getItem(ORDER_KEY) === "activity" ? "activity" : "newest";
  } catch {
    return "newest";
  }
}

function SidebarRow(props: {
  readonly thread: ThreadRow;
  readonly children: readonly ThreadRow[];
  readonly pending: number;
  readonly current: boolean;
  readonly nowMs: number;
  /** Where the row sits when its list holds more rows than the page does. */
  readonly place: RowPlace | null;
}) {
  const { thread } = props;
  const badge = badgeOf(thread, props.children, props.pending);
  const route = { page: "thread", threadId: thread.threadId } as const;
  const provider = `${thread.providerInstanceId}${thread.model !== null ? ` · ${thread.model}` : ""}`;
  return (
    <li aria-posinset={props.place?.position} aria-setsize={props.place?.of}>
      <a
        href={pathOf(route)}
        onClick={onLinkClick(route)}
        class={`thread-row${props.current ? " current" : ""}`}
        aria-current={props.current ? "page" : undefined}
        data-thread-id={thread.threadId}
      >
        <span class="thread-title">{thread.title || "Untitled"}</span>
        <span class="thread-meta">
          <span class={`badge badge-${badge.replace(/ /g, "-")}`}>{badge}</span>
          {/* One line a row: a long provider and model are cut short, and whole on hover. */}
          <span class="provider" title={provider}>
            {provider}
          </span>
          <span class="when" title={`last activity ${thread.updatedAt}`}>
            {relativeTime(thread.updatedAt, props.nowMs)}
          </span>
        </span>
      </a>
    </li>
  );
}

function Section(props: {
  readonly name: SectionName;
  readonly label: string;
  readonly threads: readonly ThreadRow[];
  readonly open: boolean;
  readonly onToggle: () => void;
  readonly render: (thread: ThreadRow, place: RowPlace | null) => preact.JSX.Element;
  readonly projectId: string;
  readonly viewport: RefObject<HTMLElement | null>;
  /** Lays the section's threads out otherwise than one list (Subagents, under their parents). */
  readonly body?: preact.JSX.Element;
}) {
  const id = `section-${props.projectId}-${props.name}`;
  return (
    <section class="sidebar-section" data-section={props.name}>
      <h3>
        <button
          type="button"
          class="section-toggle"
          aria-expanded={props.open}
          aria-controls={id}
          onClick={props.onToggle}
        >
          <span aria-hidden="true">{props.open ? "▾" : "▸"}</span> {props.label}{" "}
          <span class="count">{props.threads.length}</span>
        </button>
      </h3>
      {props.open &&
        (props.body !== undefined && props.threads.length > 0 ? (
          <div id={id}>{props.body}</div>
        ) : (
          <WindowedList
            id={id}
            class="thread-list"
            items={props.threads}
            render={props.render}
            viewport={props.viewport}
            empty={<li class="empty">None</li>}
          />
        ))}
    </section>
  );
}

/**
 * Projects → threads, newest first; children, snoozed and settled threads in their own sections,
 * folded as the person left them. Under 700 px it is a drawer the top bar's Threads button opens
 * (`drawerOpen`); it closes on a choice, Escape, its Close button or a click beside it.
 */
export function Sidebar(props: {
  readonly projects: readonly Project[];
  readonly threads: ReadonlyMap<string, ThreadRow>;
  /** Whether the threads are read: until then an empty list says it is loading, not "No threads yet". */
  readonly threadsLoaded: boolean;
  readonly pending: ReadonlyMap<string, number>;
  readonly currentThreadId: string | null;
  readonly drawerOpen: boolean;
  readonly onCloseDrawer: () => void;
}) {
  const [open, setOpen] = useState(() => loadOpenSections(storage));
  const [order, setOrder] = useState<SidebarOrder>(loadOrder);
  const [filter, setFilter] = useState<ThreadFilter>(NO_FILTER);
  // Relative times move on slowly: once a minute is enough for "5m ago".
  const [nowMs, setNowMs] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNowMs(Date.now()), 60_000);
    return () => clearInterval(timer);
  }, []);
  const changeOrder = (next: SidebarOrder) => {
    setOrder(next);
    try {
      storage?.setItem(ORDER_KEY, next);
    } catch {
      // Not remembered: the choice holds for this page.
    }
  };
  const filtering = isFiltering(filter);
  const searchText = filter.text.trim();
  const providers = providersOf(props.threads.values());
  const toggle = (name: SectionName) => () => {
    const next = { ...open, [name]: !open[name] };
    setOpen(next);
    saveOpenSections(storage, next);
  };
  // Each row's badge looks at its children: grouped once here, not searched for per row (1,000 rows would make it a million steps).
  const children = childrenByParent(props.threads.values());
  const render = (thread: ThreadRow, place: RowPlace | null) => (
    <SidebarRow
      key={thread.threadId}
      thread={thread}
      children={children.get(thread.threadId) ?? []}
      pending={props.pending.get(thread.threadId) ?? 0}
      current={thread.threadId === props.currentThreadId}
      nowMs={nowMs}
      place={place}
    />
  );
  // The lists put in the page only the rows near the screen of this scrolling box (windowed-list.tsx).
  const viewport = useRef<HTMLElement>(null);
  const home: Route = { page: "home" };
  return (
    <>
      {props.drawerOpen && <div class="drawer-backdrop" onClick={props.onCloseDrawer} />}
      <nav
        id="sidebar"
        ref={viewport}
        class={`sidebar${props.drawerOpen ? " open" : ""}`}
        aria-label="Projects and threads"
      >
        <div class="drawer-head">
          <span class="drawer-title">Projects and threads</span>
          <button type="button" class="drawer-close" onClick={props.onCloseDrawer}>
            Close
          </button>
        </div>
        {/* The filter narrows the listed titles as one types; Enter asks the server to search messages too. */}
        <form
          role="search"
          class="sidebar-tools"
          onSubmit={(event) => {
            event.preventDefault();
            if (searchText !== "") navigate({ page: "search", query: searchText });
          }}
        >
          <label for="thread-filter" class="visually-hidden">
            Filter threads by title; Enter searches their messages
          </label>
          <input
            id="thread-filter"
            type="search"
            placeholder="Filter (/), Enter: search"
            maxLength={200}
            value={filter.text}
            onInput={(event) => setFilter({ ...filter, text: (event.target as HTMLInputElement).value })}
          />
          <label for="thread-order" class="visually-hidden">
            Order threads by
          </label>
          <select
            id="thread-order"
            value={order}
            onChange={(event) => changeOrder((event.target as HTMLSelectElement).value as SidebarOrder)}
          >
            <option value="newest">Newest</option>
            <option value="activity">Recent activity</option>
          </select>
        </form>
        {searchText !== "" && (
          <p class="search-messages">
            <a
              href={pathOf({ page: "search", query: searchText })}
              onClick={onLinkClick({ page: "search", query: searchText })}
            >
              Search messages for “{searchText}”
            </a>
          </p>
        )}
        <div class="sidebar-tools sidebar-filters">
          <label for="thread-status-filter" class="visually-hidden">
            Show threads with status
          </label>
          <select
            id="thread-status-filter"
            value={filter.status}
            onChange={(event) =>
              setFilter({ ...filter, status: statusFilterOf((event.target as HTMLSelectElement).value) })
            }
          >
            {STATUS_FILTERS.map((choice) => (
              <option key={choice.value} value={choice.value}>
                {choice.label}
              </option>
            ))}
          </select>
          <label for="thread-provider-filter" class="visually-hidden">
            Show threads on provider
          </label>
          <select
            id="thread-provider-filter"
            value={filter.provider ?? ""}
            onChange={(event) => {
              const value = (event.target as HTMLSelectElement).value;
              setFilter({ ...filter, provider: value === "" ? null : value });
            }}
          >
            <option value="">Any provider</option>
            {/* A chosen provider stays offered even when no listed thread runs on it any more. */}
            {(filter.provider !== null && !providers.includes(filter.provider)
              ? [...providers, filter.provider]
              : providers
            ).map((provider) => (
              <option key={provider} value={provider}>
                {provider}
              </option>
            ))}
          </select>
          {filtering && (
            <button type="button" class="clear-filters" onClick={() => setFilter(NO_FILTER)}>
              Clear
            </button>
          )}
        </div>
        {props.projects.length === 0 && (
          <p class="empty sidebar-empty">
            No projects yet.{" "}
            <a href={pathOf(home)} onClick={onLinkClick(home)}>
              Get started
            </a>{" "}
            adds one.
          </p>
        )}
        {props.projects.map((project) => {
          const sections = sidebarSections(
            [...props.threads.values()].filter(
              (thread) =>
                thread.projectId === project.projectId &&
                (!filtering ||
                  matchesFilter(
                    thread,
                    badgeOf(thread, children.get(thread.threadId) ?? [], props.pending.get(thread.threadId) ?? 0),
                    filter,
                  )),
            ),
          );
          return (
            <div class="project" key={project.projectId} data-project-id={project.projectId}>
              <div class="project-head">
                <h2 class="project-name" title={project.rootPath}>
                  {project.name}
                </h2>
                {!project.scratch && (
                  <a
                    class="new-in-project"
                    href={pathOf({ page: "new", projectId: project.projectId })}
                    onClick={onLinkClick({ page: "new", projectId: project.projectId })}
                    aria-label={`New thread in ${project.name}`}
                  >
                    + New
                  </a>
                )}
              </div>
              <WindowedList
                class="thread-list main-list"
                label={`${project.name} threads`}
                items={ordered(sections.main, order)}
                render={render}
                viewport={viewport}
                empty={
                  <li class="empty">
                    {!props.threadsLoaded
                      ? "Loading…"
                      : !filtering
                        ? "No threads yet"
                        : searchText !== ""
                          ? "No title matches; Enter searches messages"
                          : "No thread matches the filters"}
                  </li>
                }
              />
              <Section
                name="subagents"
                label="Subagents"
                threads={sections.subagents}
                open={open.subagents}
                onToggle={toggle("subagents")}
                render={render}
                projectId={project.projectId}
                viewport={viewport}
                body={
                  <>
                    {groupByParent(ordered(sections.subagents, order), props.threads).map((group) => (
                      <div class="subagent-group" key={group.parentId} data-parent-group={group.parentId}>
                        <p class="group-parent">
                          under{" "}
                          {group.parent !== null ? (
                            <a
                              href={pathOf({ page: "thread", threadId: group.parentId })}
                              onClick={onLinkClick({ page: "thread", threadId: group.parentId })}
                            >
                              {group.parent.title || "Untitled"}
                            </a>
                          ) : (
                            "a thread not listed here"
                          )}
                        </p>
                        <WindowedList class="thread-list" items={group.children} render={render} viewport={viewport} />
                      </div>
                    ))}
                  </>
                }
              />
              <Section
                name="snoozed"
                label="Snoozed"
                threads={ordered(sections.snoozed, order)}
                open={open.snoozed}
                onToggle={toggle("snoozed")}
                render={render}
                projectId={project.projectId}
                viewport={viewport}
              />
              <Section
                name="settled"
                label="Settled"
                threads={ordered(sections.settled, order)}
                open={open.settled}
                onToggle={toggle("settled")}
                render={render}
                projectId={project.projectId}
                viewport={viewport}
              />
            </div>
          );
        })}
      </nav>
    </>
  );
}
