import { useState } from "preact/hooks";
import { api } from "../api/client.js";
import { ApiError, type SendMode, type SendResult } from "../api/types.js";
import { deliveryText } from "../model/thread-tree.js";

/** The send modes, each with what it does in a line (the shared policy decides in the end, and says so). */
export const SEND_MODES: readonly { readonly mode: SendMode; readonly label: string; readonly explains: string }[] = [
  {
    mode: "auto",
    label: "Auto",
    explains:
      "Starts a turn when it is idle; while it works, adds to the running turn if the provider can, else waits its turn.",
  },
  { mode: "queue", label: "Queue", explains: "Runs after the work under way ends: the running turn is left alone." },
  {
    mode: "steer",
    label: "Steer",
    explains:
      "Adds to the running turn now (a provider that cannot steer restarts the turn with it); refused when nothing runs.",
  },
  {
    mode: "restart",
    label: "Restart",
    explains: "Interrupts the running turn and starts it again with this message; refused when nothing runs.",
  },
];

/** Sends a message with a delivery mode and says what the policy did ("steered", "queued: …"). */
export function Composer(props: {
  readonly threadId: string;
  readonly disabled: string | null;
  readonly onSent: () => void;
}) {
  const [text, setText] = useState("");
  const [mode, setMode] = useState<SendMode>("auto");
  const [outcome, setOutcome] = useState<{
    readonly text: string;
    readonly error: boolean;
    readonly why?: string;
  } | null>(null);
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
      setOutcome({ text: deliveryText(result), error: false, why: `You asked ${result.asked}: ${result.reason}` });
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
        placeholder={props.disabled ?? "Message this thread (Ctrl+Enter sends; ? lists the shortcuts)"}
        disabled={props.disabled !== null || busy}
        value={text}
        onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) void send(e);
        }}
      />
      <div class="composer-bar">
        <fieldset class="modes" disabled={props.disabled !== null} aria-describedby="mode-explains">
          <legend class="visually-hidden">Delivery</legend>
          {SEND_MODES.map((entry) => (
            <label key={entry.mode} class={mode === entry.mode ? "selected" : ""} title={entry.explains}>
              <input
                type="radio"
                name="mode"
                value={entry.mode}
                checked={mode === entry.mode}
                onChange={() => setMode(entry.mode)}
              />
              {entry.label}
            </label>
          ))}
        </fieldset>
        <button type="submit" class="primary" disabled={props.disabled !== null || busy || text.trim() === ""}>
          Send
        </button>
      </div>
      <p id="mode-explains" class="hint mode-explains" data-mode-explains>
        {SEND_MODES.find((entry) => entry.mode === mode)!.explains}
      </p>
      {/* A refused send is an alert in the error colour, never a status in the success one. */}
      {outcome !== null && (
        <p class={outcome.error ? "error" : "outcome"} role={outcome.error ? "alert" : "status"} data-outcome>
          {outcome.text}
        </p>
      )}
      {outcome !== null && !outcome.error && outcome.why !== undefined && (
        <p class="hint decision" data-decision>
          {outcome.why}
        </p>
      )}
    </form>
  );
}
