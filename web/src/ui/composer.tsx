import { useState } from "preact/hooks";
import { api } from "../api/client.js";
import { ApiError, type SendMode, type SendResult } from "../api/types.js";
import { deliveryText } from "../model/thread-tree.js";

const MODES: readonly { readonly mode: SendMode; readonly label: string }[] = [
  { mode: "auto", label: "Auto" },
  { mode: "queue", label: "Queue" },
  { mode: "steer", label: "Steer" },
  { mode: "restart", label: "Restart" },
];

/** Sends a message with a delivery mode and says what the policy did ("steered", "queued: …"). */
export function Composer(props: { readonly threadId: string; readonly disabled: string | null; readonly onSent: () => void }) {
  const [text, setText] = useState("");
  const [mode, setMode] = useState<SendMode>("auto");
  const [outcome, setOutcome] = useState<{ readonly text: string; readonly error: boolean } | null>(null);
  const [busy, setBusy] = useState(false);
  const send = async (event: Event) => {
    event.preventDefault();
    if (text.trim() === "") return;
    setBusy(true);
    try {
      const result = await api<SendResult>("POST", `/threads/${encodeURIComponent(props.threadId)}/messages`, {
        message: text,
        mode,
        clientRequestId: `ui-${crypto.randomUUID()}`,
      });
      setOutcome({ text: deliveryText(result), error: false });
      setText("");
      props.onSent();
    } catch (failure) {
      setOutcome({ text: failure instanceof ApiError ? failure.message : String(failure), error: true });
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="composer" onSubmit={send} aria-label="Send a message">
      <label for="composer-text" class="visually-hidden">
        Message
      </label>
      <textarea
        id="composer-text"
        rows={3}
        placeholder={props.disabled ?? "Message this thread (Ctrl+Enter sends)"}
        disabled={props.disabled !== null || busy}
        value={text}
        onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) void send(e);
        }}
      />
      <div class="composer-bar">
        <fieldset class="modes" disabled={props.disabled !== null}>
          <legend class="visually-hidden">Delivery</legend>
          {MODES.map((entry) => (
            <label key={entry.mode} class={mode === entry.mode ? "selected" : ""}>
              <input type="radio" name="mode" value={entry.mode} checked={mode === entry.mode} onChange={() => setMode(entry.mode)} />
              {entry.label}
            </label>
          ))}
        </fieldset>
        <button type="submit" class="primary" disabled={props.disabled !== null || busy || text.trim() === ""}>
          Send
        </button>
      </div>
      {/* A refused send is an alert in the error colour, never a status in the success one. */}
      {outcome !== null && (
        <p class={outcome.error ? "error" : "outcome"} role={outcome.error ? "alert" : "status"} data-outcome>
          {outcome.text}
        </p>
      )}
    </form>
  );
}
