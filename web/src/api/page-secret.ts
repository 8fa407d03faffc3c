/**
 * The web UI session's page secret: the sign-in answers it once, and the server wants it, with
 * the cookie, on every request. It lives in localStorage, which the browser scopes to this
 * origin (scheme, host and port): another server on this host gets the cookie, never this.
 * localStorage rather than sessionStorage because the cookie is one per browser, shared by every
 * tab: a reload and a second tab use the same session, a sign-in in one tab replaces the secret
 * for all of them (with sessionStorage it would replace the cookie under the other tabs' feet),
 * and a sign-out in one signs them all out. A browser that refuses storage keeps it in this
 * page's memory: the session then ends with the page.
 */
const KEY = "switchyard.pageSecret";

/** Where the secret is kept when storage is refused. */
let inMemory: string | null = null;

function storage(): Storage | null {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
}

/** The page secret, or null when this origin has not signed in (or signed out). */
export function pageSecret(): string | null {
  const stored = storage();
  if (stored === null) return inMemory;
  try {
    return stored.getItem(KEY) ?? inMemory;
  } catch {
    return inMemory;
  }
}

export function keepPageSecret(secret: string): void {
  inMemory = secret;
  try {
    storage()?.setItem(KEY, secret);
  } catch {
    // Storage refused (quota, a private mode): memory holds it.
  }
}

/** Forgets the page secret; with `refused`, only if it is still that one (another tab may have signed in again since). */
export function forgetPageSecret(refused?: string): void {
  if (refused !== undefined && pageSecret() !== refused) return;
  inMemory = null;
  try {
    storage()?.removeItem(KEY);
  } catch {
    // Nothing was stored.
  }
}

/** Calls `onGone` when another tab of this origin signs out (the secret leaves storage). */
export function onPageSecretGone(onGone: () => void): () => void {
  const listener = (event: StorageEvent) => {
    if ((event.key === KEY || event.key === null) && event.newValue === null) onGone();
  };
  window.addEventListener("storage", listener);
  return () => window.removeEventListener("storage", listener);
}
