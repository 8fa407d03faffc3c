/**
 * The current spec version's names, without a version: each is an alias of its v1 type, so
 * code written against "the spec" follows the current version while the versioned names stay
 * fixed. A v2 would point these at its V2 types; the V1 names would stay for plugins (and the
 * host's v1 adapter) that implement v1.
 */

import type {
  ModelDescriptorV1,
  ModelSourceV1,
  ProbeDepthV1,
  ProbeOptionsV1,
  ProviderStatusV1,
  HarnessSourceV1,
  HarnessLookupV1,
  HarnessReportV1,
  McpEndpointGrantV1,
  OpenSessionInputV1,
  TurnInputV1,
  SteerInputV1,
  SteerOutcomeV1,
  InterruptInputV1,
  ForkInputV1,
  RuntimeRequestResponseV1,
  SnapshotTurnV1,
  ThreadSnapshotV1,
  ProviderSessionV1,
  OrchestrationAdapterV1,
} from "./v1/adapter.js";
import type {
  GuaranteeQualityV1,
  SessionCapabilitiesV1,
  ThreadCapabilitiesV1,
  TurnCapabilitiesV1,
  McpTransportCapabilitiesV1,
  ToolCapabilitiesV1,
  RuntimeRequestCapabilitiesV1,
  SubagentCapabilitiesV1,
  ContextCapabilitiesV1,
  IdentityCapabilitiesV1,
  ModelShortListV1,
  ModelCapabilitiesV1,
  ProviderCapabilitiesV1,
  CapabilityDeclarationV1,
  CapabilityNameV1,
  DecodedCapabilitiesV1,
} from "./v1/capabilities.js";
import type {
  CommandArgumentV1,
  CommandOptionV1,
  CommandInvocationV1,
  ConfiguredInstanceV1,
  CommandStyleV1,
  CommandOutputV1,
  CommandContextV1,
  CommandV1,
  CommandGroupV1,
} from "./v1/commands.js";
import type {
  OptionsSchemaV1,
  OptionsValidationResultV1,
  ProviderInstanceDescriptorV1,
  PluginLoggerV1,
  SpawnOptionsV1,
  ManagedProcessV1,
  ProcessHelpersV1,
  PluginPathsV1,
  PluginContextV1,
  CreateInstanceInputV1,
  ProviderDriverV1,
  PluginDefinitionV1,
  PluginManifestV1,
} from "./v1/driver.js";
import type { RouteScopeV1, RouteContextV1, RouteCallerV1, RouteRequestV1, PluginRouteV1, PluginRoutesV1 } from "./v1/routes.js";
import type {
  ToolKindV1,
  ApprovalKindV1,
  TurnTerminalStatusV1,
  ProviderTurnErrorV1,
  TurnStartedEventV1,
  MessageDeltaEventV1,
  MessageCompletedEventV1,
  ReasoningDeltaEventV1,
  ReasoningCompletedEventV1,
  ToolCallStartedEventV1,
  ToolCallCompletedEventV1,
  ApprovalOptionV1,
  ApprovalDecisionV1,
  ApprovalRequestV1,
  UserInputQuestionV1,
  UserInputRequestV1,
  RuntimeRequestOpenedEventV1,
  RuntimeRequestResolvedEventV1,
  SubagentObservedEventV1,
  PlanProposedEventV1,
  TurnTerminalEventV1,
  TurnUsageReportV1,
  ResumeCursorEventV1,
  SessionExitedEventV1,
  WarningEventV1,
  AdapterEventV1,
  AdapterEventTypeV1,
} from "./v1/events.js";

// adapter
/** The current version of {@link ModelDescriptorV1}. */
export type ModelDescriptor = ModelDescriptorV1;
/** The current version of {@link ModelSourceV1}. */
export type ModelSource = ModelSourceV1;
/** The current version of {@link ProbeDepthV1}. */
export type ProbeDepth = ProbeDepthV1;
/** The current version of {@link ProbeOptionsV1}. */
export type ProbeOptions = ProbeOptionsV1;
/** The current version of {@link ProviderStatusV1}. */
export type ProviderStatus = ProviderStatusV1;
/** The current version of {@link HarnessSourceV1}. */
export type HarnessSource = HarnessSourceV1;
/** The current version of {@link HarnessLookupV1}. */
export type HarnessLookup = HarnessLookupV1;
/** The current version of {@link HarnessReportV1}. */
export type HarnessReport = HarnessReportV1;
/** The current version of {@link McpEndpointGrantV1}. */
export type McpEndpointGrant = McpEndpointGrantV1;
/** The current version of {@link OpenSessionInputV1}. */
export type OpenSessionInput = OpenSessionInputV1;
/** The current version of {@link TurnInputV1}. */
export type TurnInput = TurnInputV1;
/** The current version of {@link SteerInputV1}. */
export type SteerInput = SteerInputV1;
/** The current version of {@link SteerOutcomeV1}. */
export type SteerOutcome = SteerOutcomeV1;
/** The current version of {@link InterruptInputV1}. */
export type InterruptInput = InterruptInputV1;
/** The current version of {@link ForkInputV1}. */
export type ForkInput = ForkInputV1;
/** The current version of {@link RuntimeRequestResponseV1}. */
export type RuntimeRequestResponse = RuntimeRequestResponseV1;
/** The current version of {@link SnapshotTurnV1}. */
export type SnapshotTurn = SnapshotTurnV1;
/** The current version of {@link ThreadSnapshotV1}. */
export type ThreadSnapshot = ThreadSnapshotV1;
/** The current version of {@link ProviderSessionV1}. */
export type ProviderSession = ProviderSessionV1;
/** The current version of {@link OrchestrationAdapterV1}. */
export type OrchestrationAdapter = OrchestrationAdapterV1;

// capabilities
/** The current version of {@link GuaranteeQualityV1}. */
export type GuaranteeQuality = GuaranteeQualityV1;
/** The current version of {@link SessionCapabilitiesV1}. */
export type SessionCapabilities = SessionCapabilitiesV1;
/** The current version of {@link ThreadCapabilitiesV1}. */
export type ThreadCapabilities = ThreadCapabilitiesV1;
/** The current version of {@link TurnCapabilitiesV1}. */
export type TurnCapabilities = TurnCapabilitiesV1;
/** The current version of {@link McpTransportCapabilitiesV1}. */
export type McpTransportCapabilities = McpTransportCapabilitiesV1;
/** The current version of {@link ToolCapabilitiesV1}. */
export type ToolCapabilities = ToolCapabilitiesV1;
/** The current version of {@link RuntimeRequestCapabilitiesV1}. */
export type RuntimeRequestCapabilities = RuntimeRequestCapabilitiesV1;
/** The current version of {@link SubagentCapabilitiesV1}. */
export type SubagentCapabilities = SubagentCapabilitiesV1;
/** The current version of {@link ContextCapabilitiesV1}. */
export type ContextCapabilities = ContextCapabilitiesV1;
/** The current version of {@link IdentityCapabilitiesV1}. */
export type IdentityCapabilities = IdentityCapabilitiesV1;
/** The current version of {@link ModelShortListV1}. */
export type ModelShortList = ModelShortListV1;
/** The current version of {@link ModelCapabilitiesV1}. */
export type ModelCapabilities = ModelCapabilitiesV1;
/** The current version of {@link ProviderCapabilitiesV1}. */
export type ProviderCapabilities = ProviderCapabilitiesV1;
/** The current version of {@link CapabilityDeclarationV1}. */
export type CapabilityDeclaration = CapabilityDeclarationV1;
/** The current version of {@link CapabilityNameV1}. */
export type CapabilityName = CapabilityNameV1;
/** The current version of {@link DecodedCapabilitiesV1}. */
export type DecodedCapabilities = DecodedCapabilitiesV1;

// commands
/** The current version of {@link CommandArgumentV1}. */
export type CommandArgument = CommandArgumentV1;
/** The current version of {@link CommandOptionV1}. */
export type CommandOption = CommandOptionV1;
/** The current version of {@link CommandInvocationV1}. */
export type CommandInvocation = CommandInvocationV1;
/** The current version of {@link ConfiguredInstanceV1}. */
export type ConfiguredInstance = ConfiguredInstanceV1;
/** The current version of {@link CommandStyleV1}. */
export type CommandStyle = CommandStyleV1;
/** The current version of {@link CommandOutputV1}. */
export type CommandOutput = CommandOutputV1;
/** The current version of {@link CommandContextV1}. */
export type CommandContext = CommandContextV1;
/** The current version of {@link CommandV1}. */
export type Command = CommandV1;
/** The current version of {@link CommandGroupV1}. */
export type CommandGroup = CommandGroupV1;

// driver
/** The current version of {@link OptionsSchemaV1}. */
export type OptionsSchema<T> = OptionsSchemaV1<T>;
/** The current version of {@link OptionsValidationResultV1}. */
export type OptionsValidationResult<T> = OptionsValidationResultV1<T>;
/** The current version of {@link ProviderInstanceDescriptorV1}. */
export type ProviderInstanceDescriptor = ProviderInstanceDescriptorV1;
/** The current version of {@link PluginLoggerV1}. */
export type PluginLogger = PluginLoggerV1;
/** The current version of {@link SpawnOptionsV1}. */
export type SpawnOptions = SpawnOptionsV1;
/** The current version of {@link ManagedProcessV1}. */
export type ManagedProcess = ManagedProcessV1;
/** The current version of {@link ProcessHelpersV1}. */
export type ProcessHelpers = ProcessHelpersV1;
/** The current version of {@link PluginPathsV1}. */
export type PluginPaths = PluginPathsV1;
/** The current version of {@link PluginContextV1}. */
export type PluginContext = PluginContextV1;
/** The current version of {@link CreateInstanceInputV1}. */
export type CreateInstanceInput<TOptions> = CreateInstanceInputV1<TOptions>;
/** The current version of {@link ProviderDriverV1}. */
export type ProviderDriver<TOptions = unknown> = ProviderDriverV1<TOptions>;
/** The current version of {@link PluginDefinitionV1}. */
export type PluginDefinition = PluginDefinitionV1;

// routes
/** The current version of {@link RouteScopeV1}. */
export type RouteScope = RouteScopeV1;
/** The current version of {@link RouteContextV1}. */
export type RouteContext = RouteContextV1;
/** The current version of {@link RouteCallerV1}. */
export type RouteCaller = RouteCallerV1;
/** The current version of {@link RouteRequestV1}. */
export type RouteRequest<TParams = Record<string, string>, TQuery = Record<string, string>, TBody = Record<string, unknown>> = RouteRequestV1<TParams, TQuery, TBody>;
/** The current version of {@link PluginRouteV1}. */
export type PluginRoute<TParams = any, TQuery = any, TBody = any> = PluginRouteV1<TParams, TQuery, TBody>;
/** The current version of {@link PluginRoutesV1}. */
export type PluginRoutes = PluginRoutesV1;
/** The current version of {@link PluginManifestV1}. */
export type PluginManifest = PluginManifestV1;

// events
/** The current version of {@link ToolKindV1}. */
export type ToolKind = ToolKindV1;
/** The current version of {@link ApprovalKindV1}. */
export type ApprovalKind = ApprovalKindV1;
/** The current version of {@link TurnTerminalStatusV1}. */
export type TurnTerminalStatus = TurnTerminalStatusV1;
/** The current version of {@link ProviderTurnErrorV1}. */
export type ProviderTurnError = ProviderTurnErrorV1;
/** The current version of {@link TurnStartedEventV1}. */
export type TurnStartedEvent = TurnStartedEventV1;
/** The current version of {@link MessageDeltaEventV1}. */
export type MessageDeltaEvent = MessageDeltaEventV1;
/** The current version of {@link MessageCompletedEventV1}. */
export type MessageCompletedEvent = MessageCompletedEventV1;
/** The current version of {@link ReasoningDeltaEventV1}. */
export type ReasoningDeltaEvent = ReasoningDeltaEventV1;
/** The current version of {@link ReasoningCompletedEventV1}. */
export type ReasoningCompletedEvent = ReasoningCompletedEventV1;
/** The current version of {@link ToolCallStartedEventV1}. */
export type ToolCallStartedEvent = ToolCallStartedEventV1;
/** The current version of {@link ToolCallCompletedEventV1}. */
export type ToolCallCompletedEvent = ToolCallCompletedEventV1;
/** The current version of {@link ApprovalOptionV1}. */
export type ApprovalOption = ApprovalOptionV1;
/** The current version of {@link ApprovalDecisionV1}. */
export type ApprovalDecision = ApprovalDecisionV1;
/** The current version of {@link ApprovalRequestV1}. */
export type ApprovalRequest = ApprovalRequestV1;
/** The current version of {@link UserInputQuestionV1}. */
export type UserInputQuestion = UserInputQuestionV1;
/** The current version of {@link UserInputRequestV1}. */
export type UserInputRequest = UserInputRequestV1;
/** The current version of {@link RuntimeRequestOpenedEventV1}. */
export type RuntimeRequestOpenedEvent = RuntimeRequestOpenedEventV1;
/** The current version of {@link RuntimeRequestResolvedEventV1}. */
export type RuntimeRequestResolvedEvent = RuntimeRequestResolvedEventV1;
/** The current version of {@link SubagentObservedEventV1}. */
export type SubagentObservedEvent = SubagentObservedEventV1;
/** The current version of {@link PlanProposedEventV1}. */
export type PlanProposedEvent = PlanProposedEventV1;
/** The current version of {@link TurnTerminalEventV1}. */
export type TurnTerminalEvent = TurnTerminalEventV1;
/** The current version of {@link TurnUsageReportV1}. */
export type TurnUsageReport = TurnUsageReportV1;
/** The current version of {@link ResumeCursorEventV1}. */
export type ResumeCursorEvent = ResumeCursorEventV1;
/** The current version of {@link SessionExitedEventV1}. */
export type SessionExitedEvent = SessionExitedEventV1;
/** The current version of {@link WarningEventV1}. */
export type WarningEvent = WarningEventV1;
/** The current version of {@link AdapterEventV1}. */
export type AdapterEvent = AdapterEventV1;
/** The current version of {@link AdapterEventTypeV1}. */
export type AdapterEventType = AdapterEventTypeV1;
