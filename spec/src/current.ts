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
  ToolRulesV1,
  ExtraMcpServerV1,
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
  ToolRuleCapabilitiesV1,
  RuntimeRequestCapabilitiesV1,
  SubagentCapabilitiesV1,
  NativeSubagentControlV1,
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
import type {
  RouteScopeV1,
  RouteContextV1,
  RouteCallerV1,
  RouteRequestV1,
  PluginRouteV1,
  PluginRoutesV1,
} from "./v1/routes.js";
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
  SubagentMessageEventV1,
  PlanProposedEventV1,
  TurnTerminalEventV1,
  TurnUsageReportV1,
  ResumeCursorEventV1,
  SessionExitedEventV1,
  WarningEventV1,
  ProviderLimitV1,
  AdapterEventV1,
  AdapterEventTypeV1,
} from "./v1/events.js";

// adapter
/** The current version of {@link ModelDescriptorV1}. @public */
export type ModelDescriptor = ModelDescriptorV1;
/** The current version of {@link ModelSourceV1}. @experimental */
export type ModelSource = ModelSourceV1;
/** The current version of {@link ProbeDepthV1}. @public */
export type ProbeDepth = ProbeDepthV1;
/** The current version of {@link ProbeOptionsV1}. @public */
export type ProbeOptions = ProbeOptionsV1;
/** The current version of {@link ProviderStatusV1}. @public */
export type ProviderStatus = ProviderStatusV1;
/** The current version of {@link HarnessSourceV1}. @public */
export type HarnessSource = HarnessSourceV1;
/** The current version of {@link HarnessLookupV1}. @public */
export type HarnessLookup = HarnessLookupV1;
/** The current version of {@link HarnessReportV1}. @public */
export type HarnessReport = HarnessReportV1;
/** The current version of {@link McpEndpointGrantV1}. @public */
export type McpEndpointGrant = McpEndpointGrantV1;
/** The current version of {@link OpenSessionInputV1}. @public */
export type OpenSessionInput = OpenSessionInputV1;
/** The current version of {@link ToolRulesV1}. @public */
export type ToolRules = ToolRulesV1;
/** The current version of {@link ExtraMcpServerV1}. @public */
export type ExtraMcpServer = ExtraMcpServerV1;
/** The current version of {@link TurnInputV1}. @public */
export type TurnInput = TurnInputV1;
/** The current version of {@link SteerInputV1}. @public */
export type SteerInput = SteerInputV1;
/** The current version of {@link SteerOutcomeV1}. @experimental */
export type SteerOutcome = SteerOutcomeV1;
/** The current version of {@link InterruptInputV1}. @public */
export type InterruptInput = InterruptInputV1;
/** The current version of {@link ForkInputV1}. @public */
export type ForkInput = ForkInputV1;
/** The current version of {@link RuntimeRequestResponseV1}. @public */
export type RuntimeRequestResponse = RuntimeRequestResponseV1;
/** The current version of {@link SnapshotTurnV1}. @public */
export type SnapshotTurn = SnapshotTurnV1;
/** The current version of {@link ThreadSnapshotV1}. @public */
export type ThreadSnapshot = ThreadSnapshotV1;
/** The current version of {@link ProviderSessionV1}. @public */
export type ProviderSession = ProviderSessionV1;
/** The current version of {@link OrchestrationAdapterV1}. @public */
export type OrchestrationAdapter = OrchestrationAdapterV1;

// capabilities
/** The current version of {@link GuaranteeQualityV1}. @public */
export type GuaranteeQuality = GuaranteeQualityV1;
/** The current version of {@link SessionCapabilitiesV1}. @public */
export type SessionCapabilities = SessionCapabilitiesV1;
/** The current version of {@link ThreadCapabilitiesV1}. @public */
export type ThreadCapabilities = ThreadCapabilitiesV1;
/** The current version of {@link TurnCapabilitiesV1}. @public */
export type TurnCapabilities = TurnCapabilitiesV1;
/** The current version of {@link McpTransportCapabilitiesV1}. @public */
export type McpTransportCapabilities = McpTransportCapabilitiesV1;
/** The current version of {@link ToolCapabilitiesV1}. @public */
export type ToolCapabilities = ToolCapabilitiesV1;
/** The current version of {@link ToolRuleCapabilitiesV1}. @public */
export type ToolRuleCapabilities = ToolRuleCapabilitiesV1;
/** The current version of {@link RuntimeRequestCapabilitiesV1}. @public */
export type RuntimeRequestCapabilities = RuntimeRequestCapabilitiesV1;
/** The current version of {@link SubagentCapabilitiesV1}. @public */
export type SubagentCapabilities = SubagentCapabilitiesV1;
/** The current version of {@link NativeSubagentControlV1}. @experimental */
export type NativeSubagentControl = NativeSubagentControlV1;
/** The current version of {@link ContextCapabilitiesV1}. @public */
export type ContextCapabilities = ContextCapabilitiesV1;
/** The current version of {@link IdentityCapabilitiesV1}. @public */
export type IdentityCapabilities = IdentityCapabilitiesV1;
/** The current version of {@link ModelShortListV1}. @public */
export type ModelShortList = ModelShortListV1;
/** The current version of {@link ModelCapabilitiesV1}. @public */
export type ModelCapabilities = ModelCapabilitiesV1;
/** The current version of {@link ProviderCapabilitiesV1}. @public */
export type ProviderCapabilities = ProviderCapabilitiesV1;
/** The current version of {@link CapabilityDeclarationV1}. @public */
export type CapabilityDeclaration = CapabilityDeclarationV1;
/** The current version of {@link CapabilityNameV1}. @public */
export type CapabilityName = CapabilityNameV1;
/** The current version of {@link DecodedCapabilitiesV1}. @public */
export type DecodedCapabilities = DecodedCapabilitiesV1;

// commands
/** The current version of {@link CommandArgumentV1}. @public */
export type CommandArgument = CommandArgumentV1;
/** The current version of {@link CommandOptionV1}. @public */
export type CommandOption = CommandOptionV1;
/** The current version of {@link CommandInvocationV1}. @public */
export type CommandInvocation = CommandInvocationV1;
/** The current version of {@link ConfiguredInstanceV1}. @public */
export type ConfiguredInstance = ConfiguredInstanceV1;
/** The current version of {@link CommandStyleV1}. @public */
export type CommandStyle = CommandStyleV1;
/** The current version of {@link CommandOutputV1}. @public */
export type CommandOutput = CommandOutputV1;
/** The current version of {@link CommandContextV1}. @public */
export type CommandContext = CommandContextV1;
/** The current version of {@link CommandV1}. @public */
export type Command = CommandV1;
/** The current version of {@link CommandGroupV1}. @public */
export type CommandGroup = CommandGroupV1;

// driver
/** The current version of {@link OptionsSchemaV1}. @public */
export type OptionsSchema<T> = OptionsSchemaV1<T>;
/** The current version of {@link OptionsValidationResultV1}. @public */
export type OptionsValidationResult<T> = OptionsValidationResultV1<T>;
/** The current version of {@link ProviderInstanceDescriptorV1}. @public */
export type ProviderInstanceDescriptor = ProviderInstanceDescriptorV1;
/** The current version of {@link PluginLoggerV1}. @public */
export type PluginLogger = PluginLoggerV1;
/** The current version of {@link SpawnOptionsV1}. @public */
export type SpawnOptions = SpawnOptionsV1;
/** The current version of {@link ManagedProcessV1}. @public */
export type ManagedProcess = ManagedProcessV1;
/** The current version of {@link ProcessHelpersV1}. @public */
export type ProcessHelpers = ProcessHelpersV1;
/** The current version of {@link PluginPathsV1}. @public */
export type PluginPaths = PluginPathsV1;
/** The current version of {@link PluginContextV1}. @public */
export type PluginContext = PluginContextV1;
/** The current version of {@link CreateInstanceInputV1}. @public */
export type CreateInstanceInput<TOptions> = CreateInstanceInputV1<TOptions>;
/** The current version of {@link ProviderDriverV1}. @public */
export type ProviderDriver<TOptions = unknown> = ProviderDriverV1<TOptions>;
/** The current version of {@link PluginDefinitionV1}. @public */
export type PluginDefinition = PluginDefinitionV1;

// routes
/** The current version of {@link RouteScopeV1}. @experimental */
export type RouteScope = RouteScopeV1;
/** The current version of {@link RouteContextV1}. @experimental */
export type RouteContext = RouteContextV1;
/** The current version of {@link RouteCallerV1}. @experimental */
export type RouteCaller = RouteCallerV1;
/** The current version of {@link RouteRequestV1}. @experimental */
export type RouteRequest<
  TParams = Record<string, string>,
  TQuery = Record<string, string>,
  TBody = Record<string, unknown>,
> = RouteRequestV1<TParams, TQuery, TBody>;
/** The current version of {@link PluginRouteV1}. @experimental */
export type PluginRoute<TParams = any, TQuery = any, TBody = any> = PluginRouteV1<TParams, TQuery, TBody>;
/** The current version of {@link PluginRoutesV1}. @experimental */
export type PluginRoutes = PluginRoutesV1;
/** The current version of {@link PluginManifestV1}. @public */
export type PluginManifest = PluginManifestV1;

// events
/** The current version of {@link ToolKindV1}. @public */
export type ToolKind = ToolKindV1;
/** The current version of {@link ApprovalKindV1}. @public */
export type ApprovalKind = ApprovalKindV1;
/** The current version of {@link TurnTerminalStatusV1}. @public */
export type TurnTerminalStatus = TurnTerminalStatusV1;
/** The current version of {@link ProviderTurnErrorV1}. @public */
export type ProviderTurnError = ProviderTurnErrorV1;
/** The current version of {@link TurnStartedEventV1}. @public */
export type TurnStartedEvent = TurnStartedEventV1;
/** The current version of {@link MessageDeltaEventV1}. @public */
export type MessageDeltaEvent = MessageDeltaEventV1;
/** The current version of {@link MessageCompletedEventV1}. @public */
export type MessageCompletedEvent = MessageCompletedEventV1;
/** The current version of {@link ReasoningDeltaEventV1}. @public */
export type ReasoningDeltaEvent = ReasoningDeltaEventV1;
/** The current version of {@link ReasoningCompletedEventV1}. @public */
export type ReasoningCompletedEvent = ReasoningCompletedEventV1;
/** The current version of {@link ToolCallStartedEventV1}. @public */
export type ToolCallStartedEvent = ToolCallStartedEventV1;
/** The current version of {@link ToolCallCompletedEventV1}. @public */
export type ToolCallCompletedEvent = ToolCallCompletedEventV1;
/** The current version of {@link ApprovalOptionV1}. @public */
export type ApprovalOption = ApprovalOptionV1;
/** The current version of {@link ApprovalDecisionV1}. @public */
export type ApprovalDecision = ApprovalDecisionV1;
/** The current version of {@link ApprovalRequestV1}. @public */
export type ApprovalRequest = ApprovalRequestV1;
/** The current version of {@link UserInputQuestionV1}. @public */
export type UserInputQuestion = UserInputQuestionV1;
/** The current version of {@link UserInputRequestV1}. @public */
export type UserInputRequest = UserInputRequestV1;
/** The current version of {@link RuntimeRequestOpenedEventV1}. @public */
export type RuntimeRequestOpenedEvent = RuntimeRequestOpenedEventV1;
/** The current version of {@link RuntimeRequestResolvedEventV1}. @public */
export type RuntimeRequestResolvedEvent = RuntimeRequestResolvedEventV1;
/** The current version of {@link SubagentObservedEventV1}. @public */
export type SubagentObservedEvent = SubagentObservedEventV1;
/** The current version of {@link SubagentMessageEventV1}. @experimental */
export type SubagentMessageEvent = SubagentMessageEventV1;
/** The current version of {@link PlanProposedEventV1}. @public */
export type PlanProposedEvent = PlanProposedEventV1;
/** The current version of {@link TurnTerminalEventV1}. @public */
export type TurnTerminalEvent = TurnTerminalEventV1;
/** The current version of {@link TurnUsageReportV1}. @public */
export type TurnUsageReport = TurnUsageReportV1;
/** The current version of {@link ResumeCursorEventV1}. @public */
export type ResumeCursorEvent = ResumeCursorEventV1;
/** The current version of {@link SessionExitedEventV1}. @public */
export type SessionExitedEvent = SessionExitedEventV1;
/** The current version of {@link WarningEventV1}. @public */
export type WarningEvent = WarningEventV1;
/** The current version of {@link ProviderLimitV1}. @experimental */
export type ProviderLimit = ProviderLimitV1;
/** The current version of {@link AdapterEventV1}. @public */
export type AdapterEvent = AdapterEventV1;
/** The current version of {@link AdapterEventTypeV1}. @public */
export type AdapterEventType = AdapterEventTypeV1;
