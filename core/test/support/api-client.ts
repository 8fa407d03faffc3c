import { request } from "node:http";

/** One HTTP answer, its body parsed when it is JSON. */
export interface ApiAnswer<T = any> {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: T;
  readonly text: string;
}

/** A failure body: `{ error: { code, message, details } }`. */
export interface FailureBody {
  readonly error: { readonly code: string; readonly message: string; readonly details: Record<string, unknown> };
}

/**
 * A plain HTTP client for the API (node:http, no generated code): what a script would do with
 * fetch. Raw headers are passed as given, so tests can send what well-behaved clients never do.
 */
export class ApiClient {
  constructor(
    readonly baseUrl: string,
    readonly token: string | null,
  ) {}

  with(token: string | null): ApiClient {
    return new ApiClient(this.baseUrl, token);
  }

  get<T = any>(
    path: string,
    query: Record<string, string | number | boolean | readonly string[] | undefined> = {},
    headers: Record<string, string> = {},
  ): Promise<ApiAnswer<T>> {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) {
      if (value === undefined) continue;
      if (Array.isArray(value)) for (const item of value) params.append(name, item);
      else params.append(name, String(value));
    }
    const search = params.size > 0 ? `?${params.toString()}` : "";
    return this.send<T>("GET", `${path}${search}`, undefined, headers);
  }

  post<T = any>(path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiAnswer<T>> {
    return this.send<T>("POST", path, body === undefined ? undefined : JSON.stringify(body), {
      "content-type": "application/json",
      ...headers,
    });
  }

  /** Sends a request exactly as given (`path` below the base URL; `body` as raw text). */
  send<T = any>(
    method: string,
    path: string,
    body: string | undefined,
    headers: Record<string, string> = {},
  ): Promise<ApiAnswer<T>> {
    const url = new URL(`${this.baseUrl}${path}`);
    const allHeaders: Record<string, string> = {
      ...(this.token !== null ? { authorization: `Bearer ${this.token}` } : {}),
      ...headers,
    };
    if (body !== undefined) allHeaders["content-length"] = String(Buffer.byteLength(body));
    return new Promise((resolve, reject) => {
      const req = request(url, { method, headers: allHeaders, agent: false }, (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (text += chunk));
        res.on("end", () => {
          let parsed: unknown = text;
          if (String(res.headers["content-type"] ?? "").startsWith("application/json")) parsed = JSON.parse(text);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed as T, text });
        });
      });
      req.on("error", reject);
      req.end(body);
    });
  }
}

/** Asserts a success status and returns the body; otherwise throws with the failure. */
export async function ok<T = any>(answer: Promise<ApiAnswer<T>> | ApiAnswer<T>, status = 200): Promise<T> {
  const settled = await answer;
  if (settled.status !== status) throw new Error(`expected HTTP ${status}, got ${settled.status}: ${settled.text}`);
  return settled.body;
}

/** The status and typed error of a refused request (`{ error: { code, message, details } }`), for one matcher. */
export async function failure(
  answer: Promise<ApiAnswer<unknown>> | ApiAnswer<unknown>,
): Promise<{ status: number } & FailureBody["error"]> {
  const settled = await answer;
  return { status: settled.status, ...(settled.body as FailureBody).error };
}
