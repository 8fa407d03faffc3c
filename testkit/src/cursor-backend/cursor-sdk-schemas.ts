import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

/**
 * The `@cursor/sdk` release the fake Cursor backend is known to match. The fake speaks Cursor's
 * private `agent.v1` protocol, whose schemas change with the SDK; a different installed release
 * is refused (loudly) until someone re-checks the fake against it and moves this pin.
 */
export const CURSOR_SDK_VERSION = "1.0.32";

/** A protobuf message type from the SDK bundle, used only through its JSON and binary forms. */
export interface CursorMessageType {
  readonly typeName: string;
  fromBinary(bytes: Uint8Array): { toJson(options?: { emitDefaultValues?: boolean }): unknown };
  fromJson(json: unknown, options?: { ignoreUnknownFields?: boolean }): { toBinary(): Uint8Array };
}

/** The message types the fake backend reads and writes. */
export interface CursorWireSchemas {
  /** The installed SDK's version (always {@link CURSOR_SDK_VERSION}). */
  readonly sdkVersion: string;
  /** `agent.v1.AgentClientMessage`: what the SDK appends (run request, exec results, steers). */
  readonly clientMessage: CursorMessageType;
  /** `agent.v1.AgentServerMessage`: what the fake streams (updates, exec requests, checkpoints). */
  readonly serverMessage: CursorMessageType;
  /** `aiserver.v1.BidiRequestId`: the body of the `RunSSE` stream request. */
  readonly bidiRequestId: CursorMessageType;
  /** `aiserver.v1.BidiAppendRequest`: one client message, hex-encoded, for a request id. */
  readonly bidiAppendRequest: CursorMessageType;
  /** `aiserver.v1.ErrorDetails`: the detail of a failed call (its kind, whether to retry). */
  readonly errorDetails: CursorMessageType;
  /** How many message types the bundle defines (a sanity figure for diagnostics). */
  readonly typeCount: number;
}

const NEEDED = {
  clientMessage: "agent.v1.AgentClientMessage",
  serverMessage: "agent.v1.AgentServerMessage",
  bidiRequestId: "aiserver.v1.BidiRequestId",
  bidiAppendRequest: "aiserver.v1.BidiAppendRequest",
  errorDetails: "aiserver.v1.ErrorDetails",
} as const;

/** Where the installed SDK lives and which release it is. */
export interface InstalledCursorSdk {
  readonly packageDir: string;
  readonly version: string;
}

/**
 * Finds the installed `@cursor/sdk` (from `from`, a file or folder to resolve from; default this
 * module). Its `exports` map hides `package.json`, so the folder is found from the entry point.
 */
export function findInstalledCursorSdk(from: string = import.meta.url): InstalledCursorSdk {
  let entry: string;
  try {
    entry = createRequire(from).resolve("@cursor/sdk");
  } catch {
    throw new Error(
      `The fake Cursor backend loads Cursor's message schemas from an installed @cursor/sdk ${CURSOR_SDK_VERSION}, and none could be resolved from ${from}. Install it next to @switchyard/testkit (npm install @cursor/sdk@${CURSOR_SDK_VERSION}).`,
    );
  }
  for (let dir = dirname(entry); dir !== dirname(dir); dir = dirname(dir)) {
    const manifest = join(dir, "package.json");
    if (!existsSync(manifest)) continue;
    const parsed = JSON.parse(readFileSync(manifest, "utf8")) as { name?: string; version?: string };
    if (parsed.name === "@cursor/sdk") return { packageDir: dir, version: parsed.version ?? "unknown" };
  }
  throw new Error(`@cursor/sdk resolved to ${entry}, but no package.json of @cursor/sdk was found above it.`);
}

/**
 * The index of the `}` that closes the `{` just before `from`: brace matching that skips string,
 * template and comment text. Generated protobuf code has no regular-expression literal with a
 * brace or quote in it; if a release ever had one, compiling the slice fails and says where.
 */
function closingBrace(source: string, from: number): number {
  let depth = 0;
  for (let i = from; i < source.length; i++) {
    const ch = source[i];
    if (ch === '"' || ch === "'") {
      for (i++; i < source.length && source[i] !== ch; i++) if (source[i] === "\\") i++;
    } else if (ch === "`") {
      i = templateEnd(source, i + 1);
    } else if (ch === "/" && source[i + 1] === "*") {
      i = source.indexOf("*/", i + 2) + 1;
    } else if (ch === "{") {
      depth++;
    } else if (ch === "}") {
      if (depth === 0) return i;
      depth--;
    }
  }
  throw new Error(`unbalanced braces after offset ${from}`);
}

/** The index of the backquote that ends the template literal whose text starts at `from`. */
function templateEnd(source: string, from: number): number {
  for (let i = from; i < source.length; i++) {
    if (source[i] === "\\") i++;
    else if (source[i] === "`") return i;
    else if (source[i] === "$" && source[i + 1] === "{") i = closingBrace(source, i + 2);
  }
  throw new Error(`unterminated template literal after offset ${from}`);
}

type ModuleFactory = (
  module: { exports: Record<string, unknown> },
  exports: Record<string, unknown>,
  require: WebpackRequire,
) => void;
interface WebpackRequire {
  (id: string): Record<string, unknown>;
  d(exports: Record<string, unknown>, getters: Record<string, () => unknown>): void;
  r(exports: Record<string, unknown>): void;
  o(object: object, key: string): boolean;
  n(module: Record<string, unknown>): () => unknown;
}

/** The protobuf modules of the bundle: the compact-schema runtime and every generated `_pb` file. */
const PROTO_MODULE = /"(\.\.\/proto\/dist\/(?:generated\/[^"]+_pb|runtime\/compact)\.js)"\((\w*),?(\w*),?(\w*)\)\{/g;

/**
 * Loads the protobuf message classes the installed SDK itself uses, from its own bundle, at
 * test time: the generated modules are cut out of `dist/esm/index.js` and run against the SDK's
 * own `@bufbuild/protobuf`. Nothing of Cursor's code is copied into this repository, and the
 * schemas can never drift from the client under test. Fails, naming what is wrong, when the
 * installed release is not {@link CURSOR_SDK_VERSION} or the bundle no longer has the shape
 * this loader reads.
 */
export function loadCursorWireSchemas(
  options: { readonly from?: string; readonly sdkPackageDir?: string } = {},
): CursorWireSchemas {
  const sdk =
    options.sdkPackageDir !== undefined ? readInstalled(options.sdkPackageDir) : findInstalledCursorSdk(options.from);
  if (sdk.version !== CURSOR_SDK_VERSION) {
    throw new Error(
      `The fake Cursor backend is known to match @cursor/sdk ${CURSOR_SDK_VERSION}, but ${sdk.version} is installed (${sdk.packageDir}). Its private protocol may have changed: check the fake (testkit/src/cursor-backend) against the new release and move CURSOR_SDK_VERSION, or install @cursor/sdk@${CURSOR_SDK_VERSION}.`,
    );
  }
  const bundlePath = join(sdk.packageDir, "dist", "esm", "index.js");
  const source = readFileSync(bundlePath, "utf8");
  const factories = new Map<string, ModuleFactory>();
  for (const match of source.matchAll(PROTO_MODULE)) {
    const open = match.index + match[0].length - 1;
    const close = closingBrace(source, open + 1);
    const params = [match[2], match[3], match[4]].filter((name): name is string => name !== undefined && name !== "");
    try {
      factories.set(
        match[1]!,
        new Function(...params, `"use strict";${source.slice(open + 1, close)}`) as ModuleFactory,
      );
    } catch (error) {
      throw new Error(
        `The protobuf module ${match[1]} of ${bundlePath} could not be read (${(error as Error).message}); the bundle's layout changed.`,
      );
    }
  }
  if (factories.size === 0)
    throw new Error(
      `${bundlePath} holds no generated protobuf modules this loader recognises; the bundle's layout changed.`,
    );
  const protobuf = createRequire(join(sdk.packageDir, "package.json"))("@bufbuild/protobuf") as Record<string, unknown>;
  const cache = new Map<string, { exports: Record<string, unknown> }>();
  const require = ((id: string) => {
    if (id === "@bufbuild/protobuf") return protobuf;
    const cached = cache.get(id);
    if (cached !== undefined) return cached.exports;
    const factory = factories.get(id);
    if (factory === undefined)
      throw new Error(
        `The protobuf modules of ${bundlePath} need "${id}", which this loader does not provide; the bundle's layout changed.`,
      );
    const module = { exports: {} as Record<string, unknown> };
    cache.set(id, module);
    factory.call(module.exports, module, module.exports, require);
    return module.exports;
  }) as WebpackRequire;
  require.o = (object, key) => Object.prototype.hasOwnProperty.call(object, key);
  require.d = (exports, getters) => {
    for (const key of Object.keys(getters))
      if (!require.o(exports, key)) Object.defineProperty(exports, key, { enumerable: true, get: getters[key]! });
  };
  require.r = (exports) => Object.defineProperty(exports, "__esModule", { value: true });
  require.n = (module) => {
    const getter = module["__esModule"] === true ? () => module["default"] : () => module;
    require.d(getter as unknown as Record<string, unknown>, { a: getter });
    return getter;
  };
  const types = new Map<string, CursorMessageType>();
  for (const id of factories.keys()) {
    for (const value of Object.values(require(id))) {
      if (typeof value !== "function") continue;
      let typeName: unknown;
      try {
        typeName = (value as { typeName?: unknown }).typeName;
      } catch {
        continue; // the abstract base class of the compact runtime has no name
      }
      if (typeof typeName === "string" && typeName !== "") types.set(typeName, value as unknown as CursorMessageType);
    }
  }
  const pick = (typeName: string): CursorMessageType => {
    const type = types.get(typeName);
    if (type === undefined)
      throw new Error(
        `@cursor/sdk ${sdk.version} defines no ${typeName}; the fake Cursor backend cannot speak its protocol.`,
      );
    return type;
  };
  return {
    sdkVersion: sdk.version,
    clientMessage: pick(NEEDED.clientMessage),
    serverMessage: pick(NEEDED.serverMessage),
    bidiRequestId: pick(NEEDED.bidiRequestId),
    bidiAppendRequest: pick(NEEDED.bidiAppendRequest),
    errorDetails: pick(NEEDED.errorDetails),
    typeCount: types.size,
  };
}

function readInstalled(packageDir: string): InstalledCursorSdk {
  const parsed = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as {
    name?: string;
    version?: string;
  };
  if (parsed.name !== "@cursor/sdk")
    throw new Error(`${packageDir} is not the @cursor/sdk package (its package.json names ${String(parsed.name)}).`);
  return { packageDir, version: parsed.version ?? "unknown" };
}
