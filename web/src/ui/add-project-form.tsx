import { useState } from "preact/hooks";
import { api } from "../api/client.js";
import { ApiError, type AddedProject, type SessionView } from "../api/types.js";

/**
 * Adds a folder of this machine as a project (POST /projects). Only a session whose token may
 * use every project (and operate) may: others are told how to add one instead, and the server
 * refuses them anyway.
 */
export function AddProjectForm(props: {
  readonly session: SessionView;
  readonly onAdded: (added: AddedProject) => void;
}) {
  const [path, setPath] = useState("");
  const [name, setName] = useState("");
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const [outcome, setOutcome] = useState<string | null>(null);
  if (!props.session.verbs.includes("operate") || props.session.projects !== "*") {
    return (
      <p class="hint" role="note">
        Adding a project needs a session whose token has the operate verb for every project (<code>switchyard ui</code>{" "}
        issues one). Or add it on the server's machine: <code>switchyard project add &lt;folder&gt;</code>.
      </p>
    );
  }
  const add = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setProblem(null);
    setOutcome(null);
    try {
      const added = await api<AddedProject>("POST", "/projects", {
        path: path.trim(),
        ...(name.trim() !== "" ? { name: name.trim() } : {}),
      });
      setOutcome(added.existed ? `${added.project.name} was a project already.` : `Added ${added.project.name}.`);
      setPath("");
      setName("");
      props.onAdded(added);
    } catch (failure) {
      setProblem(failure instanceof ApiError ? failure.message : String(failure));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="add-project" onSubmit={add} aria-label="Add a project">
      <label for="project-path">Folder</label>
      <input
        id="project-path"
        name="path"
        placeholder="/home/you/code/app"
        autocomplete="off"
        spellcheck={false}
        required
        value={path}
        disabled={busy}
        aria-invalid={problem !== null}
        aria-describedby={problem !== null ? "project-problem" : "project-path-hint"}
        onInput={(e) => {
          setPath((e.target as HTMLInputElement).value);
          setProblem(null);
        }}
      />
      <p id="project-path-hint" class="hint field-hint">
        The full path of an existing folder on the machine Switchyard runs on.
      </p>
      <label for="project-name">Name</label>
      <input
        id="project-name"
        name="name"
        autocomplete="off"
        aria-describedby="project-name-hint"
        value={name}
        disabled={busy}
        onInput={(e) => setName((e.target as HTMLInputElement).value)}
      />
      <p id="project-name-hint" class="hint field-hint">
        Optional: the folder's name when left empty.
      </p>
      <div>
        <button type="submit" class="primary" disabled={busy || path.trim() === ""}>
          {busy ? "Adding…" : "Add project"}
        </button>
      </div>
      {problem !== null && (
        <p id="project-problem" class="error" role="alert">
          {problem}
        </p>
      )}
      {outcome !== null && (
        <p class="outcome" role="status">
          {outcome}
        </p>
      )}
    </form>
  );
}
