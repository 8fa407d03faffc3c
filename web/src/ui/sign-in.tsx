import { useState } from "preact/hooks";
import { signIn } from "../api/client.js";
import { ApiError, type SessionView } from "../api/types.js";

/** Sign-in: paste a token once. The link `switchyard ui` prints signs in on its own. */
export function SignIn(props: {
  readonly onSignedIn: (session: SessionView) => void;
  readonly problem: string | null;
}) {
  const [token, setToken] = useState("");
  const [error, setError] = useState<string | null>(props.problem);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      props.onSignedIn(await signIn({ token: token.trim() }));
    } catch (failure) {
      setError(failure instanceof ApiError ? failure.message : String(failure));
    } finally {
      setBusy(false);
      setToken("");
    }
  };
  return (
    <main class="sign-in" aria-labelledby="sign-in-title">
      <form onSubmit={submit} class="card">
        <h1 id="sign-in-title">Switchyard</h1>
        <p>
          Sign in with a token from <code>switchyard token issue</code>, or open the link <code>switchyard ui</code>{" "}
          prints.
        </p>
        <label for="token">Token</label>
        <input
          id="token"
          name="token"
          type="password"
          autocomplete="off"
          required
          value={token}
          onInput={(e) => setToken((e.target as HTMLInputElement).value)}
        />
        {error !== null && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy || token.trim() === ""}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
        <p class="hint">
          The browser keeps an HttpOnly session cookie, and this address a page secret without which the cookie is
          useless; never the token.
        </p>
      </form>
    </main>
  );
}
