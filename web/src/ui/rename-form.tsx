import { useEffect, useRef, useState } from "preact/hooks";
import { api } from "../api/client.js";
import { ApiError } from "../api/types.js";

/** The longest title the API takes (t3_thread_update). */
const MAX_TITLE = 200;

/**
 * Renames a thread in place of its heading: Enter or Save sends `action: "rename"`, Escape or
 * Cancel puts the heading back. The new title reaches every list through the `thread.renamed`
 * event, so this form only says when the server refused it.
 */
export function RenameForm(props: {
  readonly threadId: string;
  readonly title: string;
  readonly onDone: (renamed: boolean) => void;
}) {
  const [title, setTitle] = useState(props.title);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    input.current?.focus();
    input.current?.select();
  }, []);
  const save = async (event: Event) => {
    event.preventDefault();
    const trimmed = title.trim();
    if (trimmed === "") {
      setProblem("A title cannot be empty.");
      return;
    }
    if (trimmed === props.title) return props.onDone(false);
    setBusy(true);
    try {
      await api("POST", `/threads/${encodeURIComponent(props.threadId)}/update`, {
        action: "rename",
        title: trimmed,
        clientRequestId: `ui-${crypto.randomUUID()}`,
      });
      props.onDone(true);
    } catch (failure) {
      setProblem(failure instanceof ApiError ? failure.message : String(failure));
      setBusy(false);
    }
  };
  return (
    <form class="rename-form" onSubmit={save} aria-label="Rename thread">
      <label for="rename-title" class="visually-hidden">
        Thread title
      </label>
      <input
        id="rename-title"
        ref={input}
        value={title}
        maxLength={MAX_TITLE}
        disabled={busy}
        aria-invalid={problem !== null}
        aria-describedby={problem !== null ? "rename-problem" : undefined}
        onInput={(e) => {
          setTitle((e.target as HTMLInputElement).value);
          setProblem(null);
        }}
        onKeyDown={(e) => {
          if (e.key === "Escape") props.onDone(false);
        }}
      />
      <button type="submit" class="primary" disabled={busy}>
        Save
      </button>
      <button type="button" disabled={busy} onClick={() => props.onDone(false)}>
        Cancel
      </button>
      {problem !== null && (
        <p id="rename-problem" class="error" role="alert">
          {problem}
        </p>
      )}
    </form>
  );
}
