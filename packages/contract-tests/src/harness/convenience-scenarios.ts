import { Harness, type ConversationEvent } from "@durably/core";
import type { Reopen } from "../storage/api.js";
import { check } from "./invariants.js";
import type { HarnessScenario } from "./scenarios.js";
import { scenarioTools, scriptId } from "./scripts.js";

/** What new users reach for first: the answer's text, pending work after a restart, streamed text. */
export const convenienceScenarios: readonly HarnessScenario[] = [
  {
    name: "submission.stream() yields the text as it streams, the tool call and its result, and ends settled",
    async run(storage, _reopen, models) {
      const model = models({
        id: scriptId("events"),
        turns: [
          { text: "Adding. ", toolCalls: [{ name: "add", arguments: { a: 2, b: 3 } }] },
          { text: "2 + 3 = 5" },
        ],
        options: { chunkSize: 2, chunkDelayMs: 1 },
      });
      const tools = scenarioTools("parent", {
        running: () => undefined,
        executed: () => undefined,
      });
      const harness = await Harness.open(storage, { model, tools });
      try {
        const root = await harness.root();
        const submission = await root.submit({ type: "input", content: "2+3?" });
        const events: ConversationEvent[] = [];
        for await (const event of submission.stream()) events.push(event);
        const text = events.map((e) => (e.type === "text" ? e.delta : "")).join("");
        const kinds = events.map((e) => e.type).filter((t, i, all) => t !== all[i - 1]);
        check(text === "Adding. 2 + 3 = 5", () => `streamed text: ${JSON.stringify(text)}`);
        check(
          JSON.stringify(kinds) === '["text","toolCall","toolResult","text","settled"]',
          () => `event kinds: ${JSON.stringify(kinds)}`,
        );
        check(
          (await submission.answerText()) === "2 + 3 = 5",
          () => "answerText() must give the answer's text",
        );
      } finally {
        await harness.close();
      }
    },
  },
  {
    name: "after a reopen, conversation.submissions({ status }) finds the pending work and answerText() answers it",
    persistent: true,
    async run(storage, reopen, models) {
      const script = {
        id: scriptId("pending"),
        turns: [{ text: "first answer" }, { text: "second answer" }],
      };
      // Slow at first, so both are still pending when the harness closes.
      const slow = { ...script, options: { chunkSize: 1, chunkDelayMs: 50 } };
      const first = await Harness.open(storage, { model: models(slow) });
      const root = await first.root();
      const a = await root.submit({ type: "input", content: "one" });
      const b = await root.submit({ type: "input", content: "two" });
      await first.close();
      const harness = await Harness.open(await (reopen as Reopen)(), { model: models(script) });
      try {
        const again = await harness.root();
        const pending = await again.submissions({ status: ["queued", "placed"] });
        const statuses = pending.map((s) => `${s.id} ${s.submitted.status}`);
        check(
          JSON.stringify(statuses) === JSON.stringify([`${a.id} placed`, `${b.id} queued`]),
          () =>
            `pending after the reopen: ${JSON.stringify(statuses)}, expected ${a.id} placed and ${b.id} queued`,
        );
        const texts: string[] = [];
        for (const s of await again.submissions()) texts.push(await s.answerText());
        check(
          JSON.stringify(texts) === '["first answer","second answer"]',
          () => `answers: ${JSON.stringify(texts)}`,
        );
      } finally {
        await harness.close();
      }
    },
  },
];
