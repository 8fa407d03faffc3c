import { describe, expect, it } from "vitest";
import type { AdapterEvent } from "@switchyard/spec";
import { RuntimeRequestBook } from "./runtime-request-book.js";

function recorder(): { events: AdapterEvent[]; emit: (event: AdapterEvent) => void } {
  const events: AdapterEvent[] = [];
  return { events, emit: (event) => events.push(event) };
}

describe("RuntimeRequestBook: one resolution per request, dismiss means cancelled", () => {
  it("answers, dismisses and refuses unknown or mismatched answers", async () => {
    const { events, emit } = recorder();
    const book = new RuntimeRequestBook<{ rpcId: number }>(emit, "codex-request");
    const approval = book.open("t", { kind: "approval", approvalKind: "command", title: "echo hi" }, { rpcId: 7 });
    const question = book.open(
      "t",
      { kind: "user_input", blocking: true, questions: [{ id: "q", question: "Which?" }] },
      { rpcId: 8 },
    );
    expect(() => book.respond(approval.requestId, { kind: "user_input", answers: { q: "a" } })).toThrow(
      /approval; answer it with a decision/,
    );
    book.respond(approval.requestId, { kind: "approval", decision: "accept" });
    await expect(approval.outcome).resolves.toEqual({
      kind: "answered",
      response: { kind: "approval", decision: "accept" },
    });
    expect(book.find((native) => native.rpcId === 8)?.requestId).toBe(question.requestId);
    book.respond(question.requestId, { kind: "dismiss" });
    await expect(question.outcome).resolves.toEqual({ kind: "cancelled", resolution: "cancelled", dismissed: true });
    expect(() => book.respond(question.requestId, { kind: "dismiss" })).toThrow(
      expect.objectContaining({ code: "not_found" }),
    );
    expect(
      events.filter((e) => e.type === "runtime_request.resolved").map((e) => (e as { resolution: string }).resolution),
    ).toEqual(["answered", "cancelled"]);
    const late = book.open("u", { kind: "approval", approvalKind: "permission", title: "p" }, { rpcId: 9 });
    book.cancelTurn(null, "expired");
    await expect(late.outcome).resolves.toMatchObject({ kind: "cancelled", resolution: "expired" });
    expect(book.pending()).toEqual([]);
  });
});
