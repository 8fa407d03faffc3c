// Malformed inputs, generated from a seed so a run can be repeated. Tool arguments are derived
// from the input schemas the server itself publishes in tools/list, and every one is checked
// against that schema with a JSON Schema validator: only arguments the published schema rejects
// are used, so no "malformed" input is secretly valid. Raw HTTP inputs break the body, the
// JSON-RPC envelope, the headers or the method.
import Ajv2020 from "ajv/dist/2020.js";

/** A small seeded PRNG (mulberry32). */
export function random(seed) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (max) => Math.floor(next() * max),
    pick: (list) => list[Math.floor(next() * list.length)],
  };
}

const ODD_STRINGS = [
  "",
  " ",
  "\u0000",
  "\u202e\u0645\u0631\u062d\u0628\u0627",
  "🧨".repeat(40),
  "../../etc/passwd",
  "'; DROP TABLE events; --",
  "${jndi:ldap://x}",
  "<script>alert(1)</script>",
  "\ud800",
  "null",
  "undefined",
  "NaN",
  "-0",
  "1e309",
  "__proto__",
  "constructor",
];

/** A random JSON value (depth-bounded). */
function junk(rng, depth = 0) {
  const kind = rng.int(depth >= 2 ? 5 : 7);
  switch (kind) {
    case 0:
      return null;
    case 1:
      return rng.pick([0, -1, 1, 1.5, -2147483649, 2 ** 53 + 1, 1e308, -1e-308, rng.int(1_000_000) - 500_000]);
    case 2:
      return rng.next() < 0.5;
    case 3:
      return rng.pick(ODD_STRINGS);
    case 4:
      return Array.from({ length: 1 + rng.int(12) }, () => String.fromCodePoint(1 + rng.int(0x2ffff))).join("");
    case 5:
      return Array.from({ length: rng.int(4) }, () => junk(rng, depth + 1));
    default:
      return Object.fromEntries(
        Array.from({ length: rng.int(4) }, () => [
          rng.pick(["a", "threadId", "__proto__", "constructor", "x".repeat(1 + rng.int(40)), "$ref"]),
          junk(rng, depth + 1),
        ]),
      );
  }
}

/** Fixed wrong values every property is tried with. */
const WRONG_VALUES = [
  null,
  0,
  -1,
  1.5,
  true,
  false,
  "",
  "x",
  [],
  ["x"],
  [null],
  {},
  { a: 1 },
  "x".repeat(250_001),
  Array.from({ length: 101 }, () => "x"),
];

/** A valid value for a schema node, as small as the schema allows. */
function sample(schema) {
  if (!schema || typeof schema !== "object") return "x";
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const union = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(union)) return sample(union[0]);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case "string":
      return schema.format === "uri"
        ? "https://example.invalid/pull/1"
        : "x".repeat(Math.max(1, schema.minLength ?? 1));
    case "integer":
    case "number":
      return Math.max(schema.minimum ?? 0, schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : 0);
    case "boolean":
      return true;
    case "array":
      return Array.from({ length: schema.minItems ?? 0 }, () => sample(schema.items));
    case "object": {
      const value = {};
      for (const key of schema.required ?? []) value[key] = sample(schema.properties?.[key]);
      return value;
    }
    default:
      return "x";
  }
}

/** Sets `value` at `path` in a deep copy of `base` (or deletes it when `value` is `undefined`). */
function setAt(base, path, value) {
  const copy = structuredClone(base);
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key];
  const last = path.at(-1);
  if (value === undefined) delete node[last];
  else if (last === "__proto__")
    Object.defineProperty(node, last, { value, enumerable: true, configurable: true, writable: true });
  else node[last] = value;
  return copy;
}

/** Every (path, schema) of object properties and array items reachable in `base` under `schema`. */
function* slots(schema, base, path = []) {
  if (!schema || typeof schema !== "object") return;
  const union = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(union)) {
    for (const branch of union) yield* slots(branch, base, path);
    return;
  }
  if (schema.type === "object" && schema.properties) {
    for (const [key, child] of Object.entries(schema.properties)) {
      yield {
        path: [...path, key],
        schema: child,
        required: (schema.required ?? []).includes(key),
        parentStrict: schema.additionalProperties === false,
      };
      const value = path.reduce((node, part) => node?.[part], base)?.[key];
      if (value !== undefined) yield* slots(child, base, [...path, key]);
    }
  }
  if (schema.type === "array" && schema.items) {
    const value = path.reduce((node, part) => node?.[part], base);
    if (Array.isArray(value) && value.length > 0) yield* slots(schema.items, base, [...path, 0]);
  }
}

/**
 * Tool calls whose arguments the tool's published input schema rejects: each required field
 * missing, each field with wrong values (fixed ones, then random ones until `count` is reached),
 * unknown fields, and whole-argument shapes that are not objects are left to the raw HTTP set.
 */
export function malformedToolCalls(tools, count, seed) {
  const ajv = new Ajv2020({ strict: false, validateFormats: true, allErrors: false });
  ajv.addFormat("uri", { validate: (value) => URL.canParse(value) });
  const rng = random(seed);
  const seen = new Set();
  const calls = [];
  const candidates = tools.map((tool) => {
    const validate = ajv.compile(tool.inputSchema);
    const base = sample(tool.inputSchema);
    const tried = [];
    if (validate(base)) {
      for (const slot of slots(tool.inputSchema, base)) {
        if (slot.required) tried.push({ path: slot.path, value: undefined });
        for (const value of WRONG_VALUES) tried.push({ path: slot.path, value });
        if (slot.parentStrict) {
          tried.push({ path: [...slot.path.slice(0, -1), "unknownField"], value: 1 });
          tried.push({ path: [...slot.path.slice(0, -1), "__proto__"], value: { polluted: true } });
        }
      }
      tried.push({ path: ["unknownField"], value: "x" });
    }
    return { tool, validate, base, tried, slots: [...slots(tool.inputSchema, base)] };
  });
  const add = (candidate, mutation) => {
    const args = setAt(candidate.base, mutation.path, mutation.value);
    const key = `${candidate.tool.name}:${JSON.stringify(args)}`;
    if (seen.has(key) || candidate.validate(args)) return;
    seen.add(key);
    calls.push({
      name: candidate.tool.name,
      args,
      field: String(mutation.path.filter((part) => typeof part === "string").at(-1) ?? ""),
    });
  };
  for (const candidate of candidates) for (const mutation of candidate.tried) add(candidate, mutation);
  // Random wrong values until the count is reached (bounded: a schema that accepts anything ends it).
  for (let round = 0; calls.length < count && round < count * 20; round += 1) {
    const candidate = rng.pick(candidates);
    if (candidate.slots.length === 0) continue;
    const slot = rng.pick(candidate.slots);
    add(candidate, { path: slot.path, value: junk(rng) });
  }
  // Calls no schema covers: tools that do not exist, and names that only look like them.
  for (const name of [
    "no_such_tool",
    "",
    "T3_THREAD_READ",
    "t3_thread_read ",
    " t3_thread_read",
    "__proto__",
    "constructor",
    "toString",
    "hasOwnProperty",
    "t3_thread_read\u0000",
    "mcp__switchyard__t3_thread_read",
  ]) {
    calls.push({ name, args: {}, field: name });
  }
  return calls.slice(0, Math.max(count, calls.length));
}

/** Valid-shaped calls naming things that do not exist: bad input all the same. */
export function unknownIdCalls(n) {
  const calls = [];
  for (let k = 0; k < n; k += 1) {
    const id = `nope-${k}`;
    calls.push(
      { name: "t3_thread_read", args: { threadId: `thread:${id}` }, field: "threadId" },
      { name: "t3_thread_wait", args: { threadId: `thread:${id}`, timeoutMs: 0 }, field: "threadId" },
      { name: "t3_thread_send", args: { threadId: `thread:${id}`, message: "hello" }, field: "threadId" },
      { name: "t3_thread_interrupt", args: { threadId: `thread:${id}` }, field: "threadId" },
      { name: "task_status", args: { taskId: `task:${id}` }, field: "taskId" },
      { name: "task_cancel", args: { taskId: `task:${id}` }, field: "taskId" },
      { name: "t3_pending_request", args: { threadId: `thread:${id}`, action: "list" }, field: "threadId" },
      {
        name: "create_threads",
        args: { projectId: `project:${id}`, threads: [{ prompt: "hello" }] },
        field: "projectId",
      },
    );
  }
  return calls;
}

const VALID_CALL = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "t3_thread_list", arguments: {} } };

/** Raw HTTP requests that are broken below the tool level: `{ label, method, path, headers, body }`. */
export function malformedHttpRequests(count, seed, token) {
  const rng = random(seed);
  const headers = (extra = {}) => ({
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    authorization: `Bearer ${token}`,
    ...extra,
  });
  const requests = [];
  const seen = new Set();
  // Each distinct request once, so one finding is never counted many times.
  const post = (label, body, extra) => {
    const key = `${JSON.stringify(extra ?? {})}:${Buffer.isBuffer(body) ? body.toString("base64") : body}`;
    if (seen.has(key)) return;
    seen.add(key);
    requests.push({ label, method: "POST", path: "/mcp", headers: headers(extra), body });
  };
  const envelopes = [
    null,
    0,
    1,
    "tools/call",
    true,
    [],
    {},
    [1],
    [null],
    [[]],
    { jsonrpc: "1.0", id: 1, method: "tools/list" },
    { jsonrpc: 2, id: 1, method: "tools/list" },
    { id: 1, method: "tools/list" },
    { jsonrpc: "2.0", id: {}, method: "tools/list" },
    { jsonrpc: "2.0", id: [1], method: "tools/list" },
    { jsonrpc: "2.0", id: true, method: "tools/list" },
    { jsonrpc: "2.0", id: 1 },
    { jsonrpc: "2.0", id: 1, method: 5 },
    { jsonrpc: "2.0", id: 1, method: "" },
    { jsonrpc: "2.0", id: 1, method: "no/such/method" },
    { jsonrpc: "2.0", id: 1, method: "tools/call" },
    { jsonrpc: "2.0", id: 1, method: "tools/call", params: "t3_thread_list" },
    { jsonrpc: "2.0", id: 1, method: "tools/call", params: [] },
    { jsonrpc: "2.0", id: 1, method: "tools/call", params: { arguments: {} } },
    { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: 5 } },
    { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "t3_thread_list", arguments: [] } },
    { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "t3_thread_list", arguments: "x" } },
    { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "t3_thread_list", arguments: 7 } },
    { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "t3_thread_list", arguments: { limit: "many" } } },
    { jsonrpc: "2.0", id: 1, method: "tools/list", params: "x" },
    { jsonrpc: "2.0", id: 1, method: "initialize", params: {} },
    { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 5 } },
    [
      { jsonrpc: "2.0", id: 1, method: 5 },
      { jsonrpc: "2.0", id: 2 },
    ],
  ];
  for (const envelope of envelopes) post(`envelope ${JSON.stringify(envelope).slice(0, 60)}`, JSON.stringify(envelope));
  const valid = JSON.stringify(VALID_CALL);
  post("empty body", "");
  post("a JSON-RPC body with a BOM", `\ufeff${valid}`);
  post("JSON with a trailing comma", valid.replace(/}$/, ",}"));
  post("single-quoted JSON", valid.replaceAll('"', "'"));
  post("deeply nested arrays", `${"[".repeat(100_000)}${"]".repeat(100_000)}`);
  post(
    "deeply nested params",
    JSON.stringify({
      ...VALID_CALL,
      params: { name: "t3_thread_list", arguments: { limit: JSON.parse(`${"[".repeat(2_000)}${"]".repeat(2_000)}`) } },
    }),
  );
  post(
    "a body over the size limit",
    `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"${"x".repeat(4 * 1024 * 1024 + 16)}"}}`,
  );
  post("valid JSON-RPC sent as text/plain", valid, { "content-type": "text/plain" });
  post("valid JSON-RPC without a content type", valid, { "content-type": "" });
  post("valid JSON-RPC accepting only HTML", valid, { accept: "text/html" });
  post("valid JSON-RPC accepting only JSON", valid, { accept: "application/json" });
  for (const method of ["GET", "PUT", "DELETE", "PATCH"])
    requests.push({
      label: `${method} /mcp`,
      method,
      path: "/mcp",
      headers: headers(),
      body: method === "GET" ? null : valid,
    });
  requests.push({
    label: "POST to an unknown path",
    method: "POST",
    path: "/mcp/../admin",
    headers: headers(),
    body: valid,
  });
  requests.push({ label: "POST to an unknown path", method: "POST", path: "/nope", headers: headers(), body: valid });
  // Then random damage until the count: truncations, byte flips, junk.
  for (let round = 0; requests.length < count && round < count * 20; round += 1) {
    const kind = rng.int(4);
    if (kind === 0) {
      const cut = 1 + rng.int(valid.length - 2);
      post(`truncated at ${cut}`, valid.slice(0, cut));
    } else if (kind === 1) {
      const bytes = Buffer.from(valid);
      for (let flips = 1 + rng.int(3); flips > 0; flips -= 1)
        bytes[rng.int(bytes.length)] = rng.pick([0x00, 0x22, 0x7b, 0x7d, 0x5b, 0x3a, 0x2c, 0xff, 0xc3]);
      const text = bytes.toString("latin1");
      if (isValidRequestText(text)) continue;
      post("bytes flipped", bytes);
    } else if (kind === 2) {
      post("random bytes", Buffer.from(Array.from({ length: 1 + rng.int(200) }, () => rng.int(256))));
    } else {
      const value = junk(rng);
      if (value !== null && typeof value === "object" && !Array.isArray(value) && value.jsonrpc === "2.0") continue;
      post("random JSON", JSON.stringify(value));
    }
  }
  return requests;
}

/** Whether a damaged body still parses as a JSON-RPC request or notification (then it is not malformed). */
function isValidRequestText(text) {
  try {
    const parsed = JSON.parse(text);
    return (
      parsed !== null && typeof parsed === "object" && parsed.jsonrpc === "2.0" && typeof parsed.method === "string"
    );
  } catch {
    return false;
  }
}
