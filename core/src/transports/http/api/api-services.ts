import type { ProjectService } from "../../../services/project-service.js";
import type { ProviderDoctorService } from "../../../services/provider-doctor-service.js";
import type { ThreadForkService } from "../../../services/thread-fork-service.js";
import type { UsageService } from "../../../services/usage/usage-service.js";
import type { OperationServices } from "../../operation-services.js";
import type { EventStreams } from "./event-stream.js";
import type { WebSessions } from "../../../services/credentials/web-sessions.js";
import type { ReachAudit } from "../../../services/reach/reach-audit.js";
import type { RemoteChildren } from "../../../services/reach/remote-children.js";
import type { WorkspaceJanitor } from "../../../services/workspaces/workspace-janitor.js";

/** The services API routes call: the operations' (the same ones the MCP tools use), projects, the provider doctor, usage, forks, the event streams and the web UI's sessions. */
export interface ApiServices extends OperationServices {
  readonly projects: ProjectService;
  /** doctor's provider findings, for a person's client. */
  readonly providerDoctor: Pick<ProviderDoctorService, "describe">;
  readonly usage: UsageService;
  readonly forks: ThreadForkService;
  readonly eventStreams: EventStreams;
  readonly webSessions: WebSessions;
  /** Reads only: the audit of calls across environments. */
  readonly audit: Pick<ReachAudit, "list">;
  /** A thread's children in linked environments. */
  readonly remoteChildren: Pick<RemoteChildren, "ofThread">;
  /** Reads only: the project's thread workspaces. */
  readonly workspaces: Pick<WorkspaceJanitor, "list">;
}
