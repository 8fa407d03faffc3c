import { useEffect, useState } from "preact/hooks";

/** A screen of the app, from its path. */
export type Route =
  | { readonly page: "home" }
  | { readonly page: "thread"; readonly threadId: string }
  | { readonly page: "new"; readonly projectId: string | null }
  | { readonly page: "inbox" }
  | { readonly page: "providers" }
  | { readonly page: "registry" }
  | { readonly page: "search"; readonly query: string };

export function routeOf(path: string, search = ""): Route {
  const thread = /^\/threads\/([^/]+)\/?$/.exec(path);
  if (thread !== null) return { page: "thread", threadId: decodeURIComponent(thread[1]!) };
  if (path === "/new") return { page: "new", projectId: new URLSearchParams(search).get("project") };
  if (path === "/inbox") return { page: "inbox" };
  if (path === "/providers") return { page: "providers" };
  if (path === "/registry") return { page: "registry" };
  if (path === "/search") return { page: "search", query: new URLSearchParams(search).get("q") ?? "" };
  return { page: "home" };
}

/** A thread id in a path: its colons stay readable (they are valid there). */
function pathSegment(value: string): string {
  return encodeURIComponent(value).replace(/%3A/gi, ":");
}

export function pathOf(route: Route): string {
  if (route.page === "thread") return `/threads/${pathSegment(route.threadId)}`;
  if (route.page === "new")
    return route.projectId === null ? "/new" : `/new?project=${encodeURIComponent(route.projectId)}`;
  if (route.page === "search") return `/search?q=${encodeURIComponent(route.query)}`;
  return route.page === "home" ? "/" : `/${route.page}`;
}

/** Moves to a screen without reloading (the server serves the app on every client route). */
export function navigate(route: Route): void {
  const path = pathOf(route);
  if (location.pathname + location.search !== path) history.pushState(null, "", path);
  dispatchEvent(new PopStateEvent("popstate"));
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => routeOf(location.pathname, location.search));
  useEffect(() => {
    const update = () => setRoute(routeOf(location.pathname, location.search));
    addEventListener("popstate", update);
    return () => removeEventListener("popstate", update);
  }, []);
  return route;
}

/** A link that navigates in the app; a modified click opens it in a new tab as usual. */
export function onLinkClick(route: Route) {
  return (event: MouseEvent) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(route);
  };
}
