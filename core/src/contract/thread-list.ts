import { z } from "zod";
import { RunStatus } from "./fields.js";
import { THREAD_PAGE_MAX, THREAD_ROW_PAGE_MAX } from "../services/thread-query-service.js";
import { ThreadShell } from "./thread-shell.js";

/** t3_thread_list / listThreads: a project's thread shells, newest first, offset-paginated. */
export const ThreadListInput = z
  .object({
    projectId: z.string().min(1).optional(),
    title: z.string().min(1).max(200).optional(),
    runStatus: z
      .array(z.union([RunStatus, z.literal("idle")]))
      .optional()
      .describe(
        "Shells whose status is one of these (any status a shell can have); running also lists threads whose run is starting.",
      ),
    includeSubagents: z.boolean().optional(),
    snoozed: z.boolean().optional(),
    settled: z
      .boolean()
      .optional()
      .describe("true lists only settled threads, false only active ones; omitted lists both."),
    limit: z.number().int().min(1).max(THREAD_PAGE_MAX).optional(),
    offset: z.number().int().min(0).optional(),
  })
  .strict();

export const ThreadListOutput = z.object({
  projectId: z.string(),
  threads: z.array(ThreadShell),
  total: z.number(),
  offset: z.number(),
  limit: z.number(),
  hasMore: z.boolean(),
  nextOffset: z.number().nullable(),
});

/**
 * A thread as a list row shows it: who and what it is, where it sits in the tree, its state and
 * times; not its workspace, modes, links or provenance (its shell, from GET /threads/{threadId},
 * has those). A shell is a row with more fields: the same names, the same values.
 */
export const ThreadRow = z
  .object(
    ThreadShell.pick({
      threadId: true,
      title: true,
      projectId: true,
      providerInstanceId: true,
      model: true,
      effort: true,
      status: true,
      latestRunId: true,
      queuedRuns: true,
      relationship: true,
      parentThreadId: true,
      delegatedTaskId: true,
      snoozed: true,
      snoozedUntil: true,
      settled: true,
      settledAt: true,
      stopped: true,
      createdAt: true,
      updatedAt: true,
    }).shape,
  )
  .describe("A thread as a list row shows it (listThreads view=row); its shell has these fields and more.");

export type ThreadRowView = z.output<typeof ThreadRow>;

/** What listThreads answers for each thread: its whole shell (default) or its row. */
export const ThreadListView = z
  .enum(["shell", "row"])
  .describe(
    "shell (default): each thread's whole shell. row: each thread's row (ThreadRow), about half the bytes, for a client that lists many threads and reads a shell when it opens one.",
  );

/**
 * The HTTP API's listThreads input: t3_thread_list's, and the view of each thread it answers
 * with. A page of rows may be ten times as long as a page of shells (it is about five shell
 * pages' bytes); a longer page of shells is refused, not cut short.
 */
export const ThreadListQuery = ThreadListInput.extend({
  view: ThreadListView.optional(),
  limit: z
    .number()
    .int()
    .min(1)
    .max(THREAD_ROW_PAGE_MAX)
    .optional()
    .describe(`At most ${THREAD_PAGE_MAX} shells, or ${THREAD_ROW_PAGE_MAX} rows with view=row (default 20).`),
})
  .strict()
  .superRefine((input, context) => {
    if (input.view !== "row" && input.limit !== undefined && input.limit > THREAD_PAGE_MAX)
      context.addIssue({
        code: "custom",
        path: ["limit"],
        message: `at most ${THREAD_PAGE_MAX} shells a page; up to ${THREAD_ROW_PAGE_MAX} with view=row`,
      });
  });

/** listThreads' answer: `view: "row"` says the threads are rows; without it they are shells, as t3_thread_list answers. */
export const ThreadListAnswer = z.discriminatedUnion("view", [
  ThreadListOutput.extend({ view: z.literal("row"), threads: z.array(ThreadRow) }),
  ThreadListOutput.extend({ view: z.literal("shell").optional() }),
]);

/**
 * A thread's row: its shell's row fields, nothing else. Written out, not looped over the
 * schema's keys (a 1,000-row page spent a millisecond in the loop): a field missing from or
 * added to ThreadRow is a type error here.
 */
export function threadRow(shell: z.input<typeof ThreadShell>): ThreadRowView {
  const row: ThreadRowView = {
    threadId: shell.threadId,
    title: shell.title,
    projectId: shell.projectId,
    providerInstanceId: shell.providerInstanceId,
    model: shell.model,
    effort: shell.effort,
    status: shell.status,
    latestRunId: shell.latestRunId,
    queuedRuns: shell.queuedRuns,
    relationship: shell.relationship,
    parentThreadId: shell.parentThreadId,
    delegatedTaskId: shell.delegatedTaskId,
    snoozed: shell.snoozed,
    snoozedUntil: shell.snoozedUntil,
    settled: shell.settled,
    settledAt: shell.settledAt,
    createdAt: shell.createdAt,
    updatedAt: shell.updatedAt,
  };
  if (shell.stopped !== undefined) row.stopped = shell.stopped;
  return row;
}

/** A t3_thread_list answer in the view asked for: as it is, or its threads as rows. */
export function threadListAnswer(
  listed: z.input<typeof ThreadListOutput>,
  view: z.output<typeof ThreadListView> | undefined,
): z.input<typeof ThreadListAnswer> {
  return view === "row" ? { ...listed, view: "row", threads: listed.threads.map(threadRow) } : listed;
}
