import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { HarnessHome } from "./sandbox.js";
import { DUMMY_API_KEY, createHarnessSandbox } from "./sandbox.js";

/** Options for {@link createCursorHome}. */
export interface CursorHomeOptions {
  /** The fake Cursor backend's URL (`backend.url`), for `CURSOR_BACKEND_URL`. */
  backendUrl: string;
  /** `CURSOR_API_KEY` (default a dummy: the fake accepts any key unless it was started with one). */
  apiKey?: string;
}

/** A home for the Cursor SDK: `CURSOR_DATA_DIR` plus env pointing the SDK at the fake backend. */
export interface CursorHome extends HarnessHome {
  harness: "cursor";
}

/**
 * Creates an isolated Cursor data folder (`CURSOR_DATA_DIR`, where the SDK keeps its projects,
 * transcripts and settings) under a sandboxed HOME, and the env the SDK needs offline:
 * `CURSOR_BACKEND_URL` at the fake backend and a `CURSOR_API_KEY`.
 */
export async function createCursorHome(options: CursorHomeOptions): Promise<CursorHome> {
  const sandbox = await createHarnessSandbox("cursor");
  const dataDir = join(sandbox.root, "cursor-data");
  await mkdir(dataDir, { recursive: true });
  return {
    harness: "cursor",
    root: sandbox.root,
    home: dataDir,
    cwd: sandbox.cwd,
    env: {
      ...sandbox.env,
      CURSOR_DATA_DIR: dataDir,
      CURSOR_BACKEND_URL: options.backendUrl,
      CURSOR_API_KEY: options.apiKey ?? DUMMY_API_KEY,
    },
    cleanup: sandbox.cleanup,
  };
}
