import { Harness } from "@durably/core";
import { check } from "./invariants.js";
import { describeMessages, recording } from "./recording.js";
import type { HarnessScenario } from "./scenarios.js";
import { scriptId } from "./scripts.js";

/** What the model sees of a conversation. */
export const contextScenarios: readonly HarnessScenario[] = [
  {
    name: "an answer aborted mid-stream stays in the transcript and is left out of the next request",
    async run(storage, _reopen, models) {
      const model = recording(
        models({
          id: scriptId("aborted-unsent"),
          turns: [{ text: `a long story ${"-".repeat(100)}` }],
          options: { chunkSize: 1, chunkDelayMs: 4 },
        }),
      );
      const harness = await Harness.open(storage, { model });
      try {
        const root = await harness.root();
        let shown = 0;
        root.watch((view) => {
          shown = Math.max(shown, view.live.generation?.text.length ?? 0);
        });
        const first = await root.submit({ type: "input", content: "tell me a story" });
        while (shown < 10) await new Promise((r) => setTimeout(r, 2));
        await first.abort();
        const aborted = await first.wait();
        check(
          aborted.reason === "aborted",
          () => `the first input settled ${JSON.stringify(aborted)}`,
        );
        const kept = (await root.entries())[1]?.model?.[0];
        check(
          kept?.role === "assistant" && kept.stopReason === "aborted" && kept.content.length > 0,
          () =>
            `the half-answer must stay in the transcript, stopReason aborted; found ${JSON.stringify(kept)}`,
        );
        await (await root.submit({ type: "input", content: "just say hi" })).wait();
        const next = model.requests[1];
        check(
          JSON.stringify(next?.messages.map((m) => m.role)) === '["user","user"]',
          () =>
            `the next request must hold the two user messages only; it held: ${describeMessages(next)}`,
        );
      } finally {
        await harness.close();
      }
    },
  },
];
