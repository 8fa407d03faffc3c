import type { SwitchyardConfig } from "../config/config-schema.js";
import type { CallerContext } from "../services/caller-context.js";
import type { CapabilitiesService } from "../services/capabilities-service.js";
import type { DelegatedTaskService } from "../services/delegation/delegated-task-service.js";
import type { PendingRequestService } from "../services/pending-request-service.js";
import type { ScheduledTaskService } from "../services/scheduling/scheduled-task-service.js";
import type { ThreadLinks } from "../services/thread-links.js";
import type { ThreadLaunchService } from "../services/thread-launch-service.js";
import type { ThreadManagementService } from "../services/thread-management-service.js";
import type { ThreadMetadataService } from "../services/thread-metadata-service.js";
import type { ThreadQueryService } from "../services/thread-query-service.js";
import type { ForeignTasks } from "../services/reach/foreign-tasks.js";
import type { ReachForwarder } from "../services/reach/reach-forwarder.js";
import type { ChangeSetService } from "../services/workspaces/change-set-service.js";

/** The services the operations call, over MCP and the HTTP API alike. Transports shape results with the contract; services own the behaviour. */
export interface OperationServices {
  readonly config: SwitchyardConfig;
  readonly environmentId: string;
  /** Thread links and web UI URLs in results, and the thread an input's link or URL names. */
  readonly threadLinks: ThreadLinks;
  readonly capabilities: CapabilitiesService;
  readonly tasks: DelegatedTaskService;
  readonly threads: ThreadManagementService;
  readonly queries: ThreadQueryService;
  readonly metadata: ThreadMetadataService;
  readonly launches: ThreadLaunchService;
  readonly pendingRequests: PendingRequestService;
  /** Checks a call's threads, tasks and projects against the caller's token before the tool runs. */
  readonly callers: CallerContext;
  /** Scheduled tasks: create, update, list and delete (schedule_task and its siblings). */
  readonly schedules: ScheduledTaskService;
  /** Calls across environments: forwarding to linked ones (A), and the tasks linked ones delegated here (B). */
  readonly reach: ReachForwarder;
  readonly foreignTasks: ForeignTasks;
  /** A child's own workspace: its change set, applied or discarded. */
  readonly changeSets: ChangeSetService;
}
