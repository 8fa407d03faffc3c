import type * as acp from "@agentclientprotocol/sdk/unstable";
import type { ApprovalRequest, RuntimeRequestResponse, UserInputQuestion, UserInputRequest } from "@switchyard/spec";

type PropertySchema = Record<string, unknown>;

function text(value: unknown): string | undefined {
  return typeof value === "string" && value.length > 0 ? value : undefined;
}

function enumOptions(property: PropertySchema): { label: string; description?: string }[] | undefined {
  const fromEnum = Array.isArray(property.enum) ? property.enum.filter((v): v is string => typeof v === "string") : [];
  if (fromEnum.length > 0) return fromEnum.map((label) => ({ label }));
  const oneOf = Array.isArray(property.oneOf) ? property.oneOf : Array.isArray(property.anyOf) ? property.anyOf : [];
  const options = oneOf
    .filter(
      (o): o is Record<string, unknown> =>
        typeof o === "object" && o !== null && typeof (o as Record<string, unknown>).const === "string",
    )
    .map((o) => {
      const description = text(o.description);
      return { label: o.const as string, ...(description !== undefined ? { description } : {}) };
    });
  return options.length > 0 ? options : undefined;
}

/**
 * A form elicitation (`elicitation/create`, mode `form`) as a user-input request: one question
 * per schema property, keyed by the property name.
 * @public
 */
export function elicitationQuestions(request: acp.CreateElicitationRequest): UserInputRequest {
  const schema = (
    request as { requestedSchema?: { properties?: Record<string, PropertySchema>; required?: string[] | null } }
  ).requestedSchema;
  const properties = schema?.properties ?? {};
  const questions: UserInputQuestion[] = Object.entries(properties).map(([key, property]) => {
    const items =
      typeof property.items === "object" && property.items !== null ? (property.items as PropertySchema) : undefined;
    const options = enumOptions(property) ?? (items ? enumOptions(items) : undefined);
    const header = text(property.title);
    return {
      id: key,
      ...(header !== undefined ? { header } : {}),
      question: text(property.description) ?? header ?? (Object.keys(properties).length === 1 ? request.message : key),
      ...(options !== undefined ? { options } : {}),
      ...(property.type === "array" ? { multiSelect: true } : {}),
    };
  });
  if (questions.length === 0) questions.push({ id: "answer", question: request.message });
  return { kind: "user_input", questions, blocking: true };
}

/** A URL elicitation as an approval (the user is sent to a page; the agent waits). @public */
export function elicitationApproval(request: acp.CreateElicitationRequest): ApprovalRequest {
  const url = (request as { url?: unknown }).url;
  return {
    kind: "approval",
    approvalKind: "mcp-elicitation",
    title: request.message,
    ...(typeof url === "string" ? { detail: url } : {}),
  };
}

function coerce(value: string | readonly string[], property: PropertySchema | undefined): acp.ElicitationContentValue {
  const type = property?.type;
  if (type === "array") return Array.isArray(value) ? [...value] : [value as string];
  const single = Array.isArray(value) ? (value[0] ?? "") : (value as string);
  if (type === "number" || type === "integer") {
    const number = Number(single);
    return Number.isFinite(number) ? number : single;
  }
  if (type === "boolean") return /^(true|yes|1)$/i.test(single.trim());
  return single;
}

/** The elicitation response for the host's answer. @public */
export function elicitationResponse(
  request: acp.CreateElicitationRequest,
  response: RuntimeRequestResponse,
): acp.CreateElicitationResponse {
  if (response.kind === "dismiss") return { action: "cancel" };
  if (response.kind === "approval") {
    if (response.decision === "accept" || response.decision === "accept_for_session") return { action: "accept" };
    return { action: response.decision === "decline" ? "decline" : "cancel" };
  }
  const schema = (request as { requestedSchema?: { properties?: Record<string, PropertySchema> } }).requestedSchema;
  const content: Record<string, acp.ElicitationContentValue> = {};
  for (const [key, value] of Object.entries(response.answers)) content[key] = coerce(value, schema?.properties?.[key]);
  return { action: "accept", content };
}
