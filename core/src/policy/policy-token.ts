import type * as policy from "./index.js";
import { token } from "../util/di-token.js";

/** The shared policy module, as a service (tests may replace it to observe decisions). */
export type Policy = typeof policy;

/** DI token: the shared policy module. */
export const PolicyToken = token<Policy>("Policy");
