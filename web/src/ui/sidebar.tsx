import { useState } from "preact/hooks";
import type { Project, ThreadShell } from "../api/types.js";
import { badgeOf, childrenOf, sidebarSections } from "../model/thread-tree.js";
import { loadOpenSections, saveOpenSections, type SectionName } from "../model/section-memory.js";
import { onLinkClick, pathOf, type Route } from "./router.js";

const storage = typeof localStorage === "undefined" ? null : localStorage;

function ThreadRow(props: { readonly thread: ThreadShell; readonly all: ReadonlyMap<string, ThreadShell>; readonly pending: number; readonly current: boolean }) {
  const { thread } = props;
  const badge = badgeOf(thread, childrenOf(props.all.values(), thread.threadId), props.pending);
  const route = { page: "thread", threadId: thread.threadId } as const;
  return (
    <li>
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
          <span class="provider">
            {thread.providerInstanceId}
            {thread.model !== null ? ` · ${thread.model}` : ""}
          </span>
        </span>
      </a>
    </li>
  );
}

function Section(props: {
  readonly name: SectionName;
  readonly label: string;
  readonly threads: readonly ThreadShell[];
  readonly open: boolean;
  readonly onToggle: () => void;
  readonly render: (thread: ThreadShell) => preact.JSX.Element;
  readonly projectId: string;
}) {
  const id = `section-${props.projectId}-${props.name}`;
  return (
    <section class="sidebar-section" data-section={props.name}>
      <h3>
        <button type="button" class="section-toggle" aria-expanded={props.open} aria-controls={id} onClick={props.onToggle}>
          <span aria-hidden="true">{props.open ? "▾" : "▸"}</span> {props.label} <span class="count">{props.threads.length}</span>
        </button>
      </h3>
      {props.open && (
        <ul id={id} class="thread-list">
          {props.threads.length === 0 ? <li class="empty">None</li> : props.threads.map(props.render)}
        </ul>
      )}
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
  readonly threads: ReadonlyMap<string, ThreadShell>;
  readonly pending: ReadonlyMap<string, number>;
  readonly currentThreadId: string | null;
  readonly drawerOpen: boolean;
  readonly onCloseDrawer: () => void;
}) {
  const [open, setOpen] = useState(() => loadOpenSections(storage));
  const toggle = (name: SectionName) => () => {
    const next = { ...open, [name]: !open[name] };
    setOpen(next);
    saveOpenSections(storage, next);
  };
  const render = (thread: ThreadShell) => (
    <ThreadRow key={thread.threadId} thread={thread} all={props.threads} pending={props.pending.get(thread.threadId) ?? 0} current={thread.threadId === props.currentThreadId} />
  );
  const home: Route = { page: "home" };
  return (
    <>
      {props.drawerOpen && <div class="drawer-backdrop" onClick={props.onCloseDrawer} />}
      <nav id="sidebar" class={`sidebar${props.drawerOpen ? " open" : ""}`} aria-label="Projects and threads">
        <div class="drawer-head">
          <span class="drawer-title">Projects and threads</span>
          <button type="button" class="drawer-close" onClick={props.onCloseDrawer}>
            Close
          </button>
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
          const sections = sidebarSections([...props.threads.values()].filter((thread) => thread.projectId === project.projectId));
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
              <ul class="thread-list main-list" aria-label={`${project.name} threads`}>
                {sections.main.length === 0 ? <li class="empty">No threads yet</li> : sections.main.map(render)}
              </ul>
              <Section
                name="subagents"
                label="Subagents"
                threads={sections.subagents}
                open={open.subagents}
                onToggle={toggle("subagents")}
                render={render}
                projectId={project.projectId}
              />
              <Section name="snoozed" label="Snoozed" threads={sections.snoozed} open={open.snoozed} onToggle={toggle("snoozed")} render={render} projectId={project.projectId} />
              <Section name="settled" label="Settled" threads={sections.settled} open={open.settled} onToggle={toggle("settled")} render={render} projectId={project.projectId} />
            </div>
          );
        })}
      </nav>
    </>
  );
}
