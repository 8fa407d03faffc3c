import { useEffect, useRef } from "preact/hooks";

/** The app's keyboard shortcuts, as the help overlay lists them. */
export const SHORTCUTS: readonly { readonly keys: string; readonly does: string }[] = [
  { keys: "n", does: "New thread" },
  { keys: "/", does: "Filter the threads in the sidebar by title (Enter searches their messages too)" },
  { keys: "Ctrl+Enter", does: "Send the message (or start the thread)" },
  { keys: "Ctrl+.", does: "Stop the open thread (its turn, and its queued runs are held)" },
  { keys: "?", does: "Show these shortcuts" },
  { keys: "Esc", does: "Close this list, the drawer or a rename" },
];

/** Whether a key press belongs to a text field (where letters are typed, not shortcuts). */
export function typingIn(target: EventTarget | null): boolean {
  const element = target as HTMLElement | null;
  if (element === null || typeof element.tagName !== "string") return false;
  return element.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(element.tagName);
}

/** The shortcuts overlay: a modal dialog, opened with ?, closed with Escape or its button. */
export function KeyboardHelp(props: { readonly open: boolean; readonly onClose: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const element = dialog.current;
    if (element === null) return;
    if (props.open && !element.open) element.showModal();
    if (!props.open && element.open) element.close();
  }, [props.open]);
  return (
    <dialog ref={dialog} class="keyboard-help" aria-labelledby="shortcuts-title" onClose={props.onClose}>
      <h2 id="shortcuts-title">Keyboard shortcuts</h2>
      <table>
        <caption class="visually-hidden">Keys and what they do</caption>
        <tbody>
          {SHORTCUTS.map((shortcut) => (
            <tr key={shortcut.keys}>
              <th scope="row">
                <kbd>{shortcut.keys}</kbd>
              </th>
              <td>{shortcut.does}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <form method="dialog">
        <button type="submit" class="primary">
          Close
        </button>
      </form>
    </dialog>
  );
}
