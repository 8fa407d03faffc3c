import type { DependencyContainer } from "tsyringe";
import { ConfigToken, type SwitchyardConfig } from "../config/config-schema.js";
import { CallerContext } from "../services/caller-context.js";
import { CapabilitiesService } from "../services/capabilities-service.js";
import { McpSessionRegistry } from "../services/credentials/mcp-session-registry.js";
import { WebSessions } from "../services/credentials/web-sessions.js";
import { DelegatedTaskService } from "../services/delegation/delegated-task-service.js";
import { EventStreamService } from "../services/events/event-stream-service.js";
import { PendingRequestService } from "../services/pending-request-service.js";
import { ProjectService } from "../services/project-service.js";
import { ProviderDoctorService } from "../services/provider-doctor-service.js";
import { ForeignTasks } from "../services/reach/foreign-tasks.js";
import { ReachAudit } from "../services/reach/reach-audit.js";
import { ReachForwarder } from "../services/reach/reach-forwarder.js";
import { ReachGrants } from "../services/reach/reach-grants.js";
import { RemoteChildren } from "../services/reach/remote-children.js";
import { ScheduledTaskService } from "../services/scheduling/scheduled-task-service.js";
import { ScheduledTriggerService } from "../services/scheduling/scheduled-trigger-service.js";
import { ThreadForkService } from "../services/thread-fork-service.js";
import { ThreadLinks } from "../services/thread-links.js";
import { ThreadLaunchService } from "../services/thread-launch-service.js";
import { ThreadManagementService } from "../services/thread-management-service.js";
import { ThreadMetadataService } from "../services/thread-metadata-service.js";
import { ThreadQueryService } from "../services/thread-query-service.js";
import { UsageService } from "../services/usage/usage-service.js";
import { ChangeSetService } from "../services/workspaces/change-set-service.js";
import { WorkspaceJanitor } from "../services/workspaces/workspace-janitor.js";
import { token } from "../util/di-token.js";

/**
 * The services the transports call (the MCP tools, the HTTP API, webhooks, the event streams),
 * resolved once by the composition root: a transport is handed these and resolves nothing itself.
 * Each transport names the part it uses (OperationServices, ApiServices).
 */
export interface ServedServices {
  readonly config: SwitchyardConfig;
  /** This environment's id (`/health`, thread links, linked callers). */
  readonly environmentId: string;
  /** Thread links and web UI URLs in results, and the thread an input's link or URL names. */
  readonly threadLinks: ThreadLinks;
  /** Session credentials: who a bearer is, and where grants point (the MCP endpoint). */
  readonly credentials: McpSessionRegistry;
  readonly capabilities: CapabilitiesService;
  readonly tasks: DelegatedTaskService;
  readonly threads: ThreadManagementService;
  readonly queries: ThreadQueryService;
  readonly metadata: ThreadMetadataService;
  readonly launches: ThreadLaunchService;
  readonly pendingRequests: PendingRequestService;
  readonly callers: CallerContext;
  readonly schedules: ScheduledTaskService;
  readonly reach: ReachForwarder;
  readonly foreignTasks: ForeignTasks;
  readonly changeSets: ChangeSetService;
  readonly projects: ProjectService;
  readonly providerDoctor: ProviderDoctorService;
  readonly usage: UsageService;
  readonly forks: ThreadForkService;
  readonly webSessions: WebSessions;
  /** Grants of linked environments: who may call in from another machine. */
  readonly reachGrants: ReachGrants;
  readonly audit: ReachAudit;
  readonly remoteChildren: RemoteChildren;
  readonly workspaces: WorkspaceJanitor;
  /** Webhooks that fire scheduled tasks. */
  readonly scheduledTriggers: ScheduledTriggerService;
  /** What `GET /api/v1/events` streams. */
  readonly eventStream: EventStreamService;
}

/** DI token: the services the transports call. */
export const ServedServicesToken = token<ServedServices>("ServedServices");

/** Resolves the services the transports call, once per container. */
export function resolveServedServices(container: DependencyContainer): ServedServices {
  const credentials = container.resolve(McpSessionRegistry);
  return {
    config: container.resolve(ConfigToken),
    environmentId: credentials.environmentId,
    threadLinks: container.resolve(ThreadLinks),
    credentials,
    capabilities: container.resolve(CapabilitiesService),
    tasks: container.resolve(DelegatedTaskService),
    threads: container.resolve(ThreadManagementService),
    queries: container.resolve(ThreadQueryService),
    metadata: container.resolve(ThreadMetadataService),
    launches: container.resolve(ThreadLaunchService),
    pendingRequests: container.resolve(PendingRequestService),
    callers: container.resolve(CallerContext),
    schedules: container.resolve(ScheduledTaskService),
    reach: container.resolve(ReachForwarder),
    foreignTasks: container.resolve(ForeignTasks),
    changeSets: container.resolve(ChangeSetService),
    projects: container.resolve(ProjectService),
    providerDoctor: container.resolve(ProviderDoctorService),
    usage: container.resolve(UsageService),
    forks: container.resolve(ThreadForkService),
    webSessions: container.resolve(WebSessions),
    reachGrants: container.resolve(ReachGrants),
    audit: container.resolve(ReachAudit),
    remoteChildren: container.resolve(RemoteChildren),
    workspaces: container.resolve(WorkspaceJanitor),
    scheduledTriggers: container.resolve(ScheduledTriggerService),
    eventStream: container.resolve(EventStreamService),
  };
}
