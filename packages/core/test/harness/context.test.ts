import { describe, expect, it } from "vitest";
import {
  deriveContext,
  MISSING_RESULT_CONTENT,
  type AssistantMessage,
  type ConversationId,
  type EntryId,
  type EntryRecord,
  type Message,
  type ToolResultMessage,
} from "../../src/index.js";

const C = 1 as ConversationId;
const e = (id: number, fields: Partial<EntryRecord> = {}): EntryRecord => ({
  id: id as EntryId,
  conversationId: C,
  kind: "durably.user",
  ...fields,
});
const user = (text: string): Message => ({ role: "user", content: text });
const calls = (...ids: string[]): AssistantMessage => ({
  role: "assistant",
  content: [
    { type: "text", text: "let me check" },
    ...ids.map((id) => ({ type: "toolCall" as const, id, name: "read", arguments: { id } })),
  ],
  stopReason: "toolUse",
});
const answer = (text: string): AssistantMessage => ({
  role: "assistant",
  content: [{ type: "text", text }],
  stopReason: "stop",
});
const result = (id: string, content: string): ToolResultMessage => ({
  role: "toolResult",
  toolCallId: id,
  toolName: "read",
  content,
  isError: false,
});

describe("deriveContext", () => {
  it("concatenates the messages of the entries in order", () => {
    expect(
      deriveContext([e(2, { model: [user("hi")] }), e(3, { model: [answer("hello")] }), e(4)]),
    ).toEqual([user("hi"), answer("hello")]);
  });

  it("places each tool result right after its call, in call order", () => {
    const out = deriveContext([
      e(2, { model: [user("go")] }),
      e(3, { model: [calls("a", "b")] }),
      e(4, { model: [user("a note written meanwhile")] }),
      e(5, { model: [result("b", "B")] }),
      e(6, { model: [result("a", "A")] }),
    ]);
    expect(out).toEqual([
      user("go"),
      calls("a", "b"),
      result("a", "A"),
      result("b", "B"),
      user("a note written meanwhile"),
    ]);
  });

  it("pairs a call id a later answer reuses with that answer's own result", () => {
    // Some OpenAI-compatible servers number calls per response: "call_0" in every answer.
    const out = deriveContext([
      e(2, { model: [user("go")] }),
      e(3, { model: [calls("call_0")] }),
      e(4, { model: [result("call_0", "first")] }),
      e(5, { model: [calls("call_0")] }),
      e(6, { model: [result("call_0", "second")] }),
      e(7, { model: [answer("done")] }),
    ]);
    expect(out).toEqual([
      user("go"),
      calls("call_0"),
      result("call_0", "first"),
      calls("call_0"),
      result("call_0", "second"),
      answer("done"),
    ]);
  });

  it("never gives a reused id's later result to an earlier call of that id whose own result is gone", () => {
    const out = deriveContext([
      e(2, { model: [calls("call_0")] }),
      e(3, { model: [result("call_0", "first")] }),
      e(4, { model: [calls("call_0")] }),
      e(5, { model: [result("call_0", "second")] }),
      e(6, { edits: [{ type: "omit", entryId: 3 as EntryId }] }),
    ]);
    expect(out).toEqual([
      calls("call_0"),
      {
        role: "toolResult",
        toolCallId: "call_0",
        toolName: "read",
        content: MISSING_RESULT_CONTENT,
        isError: true,
      },
      calls("call_0"),
      result("call_0", "second"),
    ]);
  });

  it("leaves a second result of one call out, and a reused id without its own result gets the synthetic one", () => {
    const out = deriveContext([
      e(2, { model: [calls("a")] }),
      e(3, { model: [result("a", "A")] }),
      e(4, { model: [result("a", "again")] }),
      e(5, { model: [calls("a")] }),
    ]);
    expect(out).toEqual([
      calls("a"),
      result("a", "A"),
      calls("a"),
      {
        role: "toolResult",
        toolCallId: "a",
        toolName: "read",
        content: MISSING_RESULT_CONTENT,
        isError: true,
      },
    ]);
  });

  it("gives a call without a result a synthetic error result", () => {
    const out = deriveContext([
      e(2, { model: [calls("a", "b")] }),
      e(3, { model: [result("b", "B")] }),
    ]);
    expect(out.slice(1)).toEqual([
      {
        role: "toolResult",
        toolCallId: "a",
        toolName: "read",
        content: MISSING_RESULT_CONTENT,
        isError: true,
      },
      result("b", "B"),
    ]);
  });

  it("starts at the newest head marker and drops results whose call is out of view", () => {
    const out = deriveContext([
      e(2, { model: [user("old")] }),
      e(3, { model: [calls("a")] }),
      e(4, { model: [user("summary of the old part")], head: 2 as EntryId }),
      e(5, { model: [result("a", "A")] }),
      e(6, { model: [user("compacted")], head: 6 as EntryId }),
      e(7, { model: [result("a", "late")] }),
      e(8, { model: [answer("fine")] }),
    ]);
    expect(out).toEqual([user("compacted"), answer("fine")]);
  });

  it("applies edits from the context window: omit hides, replace swaps, the later edit wins", () => {
    const out = deriveContext([
      e(2, { model: [user("secret")] }),
      e(3, { model: [user("typo")] }),
      e(4, { model: [user("keep")] }),
      e(5, {
        edits: [
          { type: "omit", entryId: 2 as EntryId },
          { type: "replace", entryId: 3 as EntryId, model: [user("fixed")] },
          { type: "omit", entryId: 4 as EntryId },
        ],
      }),
      e(6, {
        edits: [{ type: "replace", entryId: 4 as EntryId, model: [user("kept after all")] }],
      }),
    ]);
    expect(out).toEqual([user("fixed"), user("kept after all")]);
  });

  it("ignores edits carried by entries before the head marker", () => {
    const out = deriveContext([
      e(2, { edits: [{ type: "omit", entryId: 4 as EntryId }] }),
      e(3, { model: [user("start")], head: 3 as EntryId }),
      e(4, { model: [user("visible")] }),
    ]);
    expect(out).toEqual([user("start"), user("visible")]);
  });

  it("omitting the call entry also drops its results", () => {
    const out = deriveContext([
      e(2, { model: [calls("a")] }),
      e(3, { model: [result("a", "A")] }),
      e(4, { edits: [{ type: "omit", entryId: 2 as EntryId }] }),
    ]);
    expect(out).toEqual([]);
  });

  it("shows a compaction's summary first, then the kept entries from its head on, then what came after it", () => {
    const out = deriveContext([
      e(2, { model: [user("old question")] }),
      e(3, { model: [answer("old answer")] }),
      e(4, { model: [user("kept question")] }),
      e(5, { model: [answer("kept answer")] }),
      e(6, { kind: "durably.compaction", model: [user("summary")], head: 4 as EntryId }),
      e(7, { model: [user("new question")] }),
    ]);
    expect(out).toEqual([
      user("summary"),
      user("kept question"),
      answer("kept answer"),
      user("new question"),
    ]);
  });

  it("a newer compaction supersedes an older one: the older summary is no longer shown", () => {
    const out = deriveContext([
      e(2, { model: [user("q1")] }),
      e(3, { model: [answer("a1")] }),
      e(4, { model: [user("q2")] }),
      e(5, { model: [answer("a2")] }),
      e(6, { model: [user("first summary")], head: 4 as EntryId }),
      e(7, { model: [user("q3")] }),
      e(8, { model: [answer("a3")] }),
      e(9, { model: [user("second summary")], head: 7 as EntryId }),
    ]);
    expect(out).toEqual([user("second summary"), user("q3"), answer("a3")]);
  });

  it("a compaction keeping entries from before an older compaction's range shows them as they were, without the older summary", () => {
    // The rule: the newest marker alone decides. Its summary, then every entry from its
    // head on that is not itself a marker, in id order.
    const out = deriveContext([
      e(2, { model: [user("q1")] }),
      e(3, { model: [answer("a1")] }),
      e(4, { model: [user("q2")] }),
      e(5, { model: [answer("a2")] }),
      e(6, { model: [user("older summary of q1")], head: 4 as EntryId }),
      e(7, { model: [user("q3")] }),
      e(8, { model: [user("newer summary, keeping from q1")], head: 2 as EntryId }),
    ]);
    expect(out).toEqual([
      user("newer summary, keeping from q1"),
      user("q1"),
      answer("a1"),
      user("q2"),
      answer("a2"),
      user("q3"),
    ]);
  });

  it("leaves out assistant messages that ended aborted or error, with their calls and results", () => {
    const aborted: AssistantMessage = {
      role: "assistant",
      content: [{ type: "text", text: "half" }],
      stopReason: "aborted",
    };
    const failedCall: AssistantMessage = { ...calls("x"), stopReason: "error" };
    const out = deriveContext([
      e(2, { model: [user("q1")] }),
      e(3, { model: [aborted] }),
      e(4, { model: [user("q2")] }),
      e(5, { model: [failedCall] }),
      e(6, { model: [result("x", "X")] }),
      e(7, { model: [answer("done")] }),
    ]);
    expect(out).toEqual([user("q1"), user("q2"), answer("done")]);
  });
});
