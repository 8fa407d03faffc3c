import { useState } from "preact/hooks";
import { api } from "../api/client.js";
import { ApiError } from "../api/types.js";
import { customSnoozeTime, localInputValue, snoozeChoices } from "../model/snooze-times.js";

/**
 * Snooze and Unsnooze in the thread menu: a snoozed thread offers Unsnooze; another opens a few
 * choices (1 hour, tomorrow morning, a custom time). The server decides what the sidebar shows
 * (its read-time rule wakes the thread early on a request or a failure), so after a change this
 * only asks for the thread again through `onChanged`.
 */
export function SnoozeMenu(props: {
  readonly threadId: string;
  readonly snoozed: boolean;
  readonly snoozedUntil: string | null;
  readonly onChanged: (outcome: { text: string; failed: boolean }) => void;
}) {
  const [open, setOpen] = useState(false);
  const [custom, setCustom] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const path = `/threads/${encodeURIComponent(props.threadId)}`;

  const send = async (action: "snooze" | "unsnooze", until?: Date) => {
    setBusy(true);
    try {
      await api("POST", `${path}/${action}`, until !== undefined ? { until: until.toISOString() } : {});
      setOpen(false);
      setProblem(null);
      props.onChanged({
        text:
          until !== undefined
            ? `Snoozed until ${until.toLocaleString()}: it moves to the Snoozed section and wakes early if it asks for something or fails.`
            : "Unsnoozed.",
        failed: false,
      });
    } catch (failure) {
      const text = failure instanceof ApiError ? failure.message : String(failure);
      if (open) setProblem(text);
      else props.onChanged({ text, failed: true });
    } finally {
      setBusy(false);
    }
  };

  if (props.snoozed) {
    return (
      <button
        type="button"
        class="quiet"
        disabled={busy}
        onClick={() => void send("unsnooze")}
        title={
          props.snoozedUntil !== null ? `Snoozed until ${new Date(props.snoozedUntil).toLocaleString()}` : undefined
        }
      >
        Unsnooze
      </button>
    );
  }
  const now = new Date();
  return (
    <div class="snooze-menu">
      <button
        type="button"
        class="quiet"
        aria-expanded={open}
        aria-controls={open ? "snooze-choices" : undefined}
        onClick={() => {
          setOpen(!open);
          setProblem(null);
        }}
        title="Hide it from the list until a time"
      >
        Snooze…
      </button>
      {open && (
        <div id="snooze-choices" class="snooze-choices" role="group" aria-label="Snooze until">
          {snoozeChoices(now).map((choice) => (
            <button
              key={choice.label}
              type="button"
              class="quiet"
              disabled={busy}
              onClick={() => void send("snooze", choice.until)}
            >
              {choice.label}
            </button>
          ))}
          <form
            class="snooze-custom"
            // The menu says why a time cannot be used, in words (the browser's own check would not).
            noValidate
            onSubmit={(event) => {
              event.preventDefault();
              const at = customSnoozeTime(custom, new Date());
              if (typeof at === "string") setProblem(at);
              else void send("snooze", at);
            }}
          >
            <label for="snooze-custom-time">Custom time</label>
            <input
              id="snooze-custom-time"
              type="datetime-local"
              value={custom}
              min={localInputValue(now)}
              onInput={(event) => setCustom((event.target as HTMLInputElement).value)}
              aria-invalid={problem !== null}
              aria-describedby={problem !== null ? "snooze-problem" : undefined}
            />
            <button type="submit" class="quiet" disabled={busy}>
              Snooze
            </button>
          </form>
          {problem !== null && (
            <p id="snooze-problem" class="error" role="alert">
              {problem}
            </p>
          )}
        </div>
      )}
    </div>
  );
}
