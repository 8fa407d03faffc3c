import type { ThreadQueryService } from "../services/thread-query-service.js";

/** What shapes a thread record into its shell, for an answer that shows threads. */
export type ThreadShells = Pick<ThreadQueryService, "shell">;
