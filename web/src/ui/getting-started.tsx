import { useState } from "preact/hooks";
import type { ProviderDoctor, SessionView } from "../api/types.js";
import { firstHourSteps } from "../model/first-hour.js";
import { startableProjects } from "../model/new-thread.js";
import { AddProjectForm } from "./add-project-form.js";
import { NewThreadForm } from "./new-thread-form.js";
import { ProviderDoctorPanel } from "./provider-doctor.js";
import type { Workspace } from "./workspace.js";

function StepHeading(props: {
  readonly id: string;
  readonly number: number;
  readonly title: string;
  readonly done: boolean | null;
}) {
  return (
    <h2 id={props.id}>
      <span class={`step-mark${props.done === true ? " done" : ""}`} aria-hidden="true">
        {props.done === true ? "✓" : props.number}
      </span>{" "}
      {props.title}
      {props.done === true && <span class="visually-hidden"> (done)</span>}
    </h2>
  );
}

/**
 * The first hour on an empty server: add a project (a folder), get a provider that can run work
 * (doctor's findings: what is missing and what fixes it), start a thread. Each step says when it
 * is done; the last one is the New thread composer itself.
 */
export function GettingStarted(props: {
  readonly workspace: Workspace;
  readonly session: SessionView;
  readonly onStarted: (threadId: string, notice: string) => void;
}) {
  const { workspace } = props;
  const [doctor, setDoctor] = useState<ProviderDoctor | null>(null);
  const steps = firstHourSteps(workspace.projects, doctor, workspace.threads.size);
  const projects = startableProjects(workspace.projects);
  return (
    <main id="main" class="page getting-started" aria-labelledby="getting-started-title">
      <h1 id="getting-started-title">Get started</h1>
      <p class="lead">
        Three steps to a first thread: a folder for agents to work in, a provider that can run them, and a prompt.
      </p>
      <ol class="steps">
        <li class="step" data-step="project" data-done={steps.project}>
          <StepHeading id="step-project" number={1} title="Add a project" done={steps.project} />
          <p>A project is a folder on the server's machine. Agents work in it (or in git worktrees of it).</p>
          {projects.length > 0 && (
            <ul class="project-list" aria-label="Projects">
              {projects.map((project) => (
                <li key={project.projectId}>
                  <strong>{project.name}</strong> <code>{project.rootPath}</code>
                </li>
              ))}
            </ul>
          )}
          <AddProjectForm session={props.session} onAdded={() => void workspace.reloadProjects()} />
        </li>
        <li class="step" data-step="provider" data-done={steps.provider === true}>
          <StepHeading id="step-provider" number={2} title="Check your providers" done={steps.provider} />
          <p>
            A provider runs an agent (Codex, Claude Code, an ACP agent…). This is what <code>switchyard doctor</code>{" "}
            finds for each one configured.
          </p>
          <ProviderDoctorPanel onLoaded={setDoctor} />
        </li>
        <li class="step" data-step="thread">
          <StepHeading id="step-thread" number={3} title="Start a thread" done={steps.thread} />
          <NewThreadForm projects={workspace.projects} session={props.session} onStarted={props.onStarted} />
        </li>
      </ol>
    </main>
  );
}

/** The New thread page: the composer on its own, for a server that is set up. */
export function NewThreadPage(props: {
  readonly workspace: Workspace;
  readonly session: SessionView;
  readonly projectId: string | null;
  readonly onStarted: (threadId: string, notice: string) => void;
}) {
  return (
    <main id="main" class="page new-thread-page" aria-labelledby="new-thread-heading">
      <h1 id="new-thread-heading">New thread</h1>
      <NewThreadForm
        projects={props.workspace.projects}
        session={props.session}
        projectId={props.projectId}
        onStarted={props.onStarted}
      />
    </main>
  );
}
