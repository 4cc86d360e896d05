import {
  defineDoc,
  defineTool,
  Harness,
  ROOT_CONVERSATION_ID as ROOT,
  type Tool,
} from "@durably/core";
import type { Reopen } from "../storage/api.js";
import { check, storedDoc } from "./invariants.js";
import type { HarnessScenario } from "./scenarios.js";
import { scriptId } from "./scripts.js";

/** An app document tools write through `api.commit`. */
export const Ledger = defineDoc<{ items: string[] }, "conversation">({
  kind: "app.ledger",
  version: 1,
  scope: "conversation",
  initial: () => ({ items: [] }),
});

/** Books an item: output, a keyed commit of app state, a memo, a result with details. */
function bookTool(log: string[]): Tool {
  let running = 0;
  return defineTool<{ item: string }>({
    name: "book",
    description: "Book an item",
    parameters: { type: "object", properties: { item: { type: "string" } }, required: ["item"] },
    replay: "safe",
    sequential: true,
    execute: async ({ item }, api) => {
      running++;
      log.push(running > 1 ? `overlap at ${item}` : `start ${item}`);
      await api.output(`booking ${item}\n`);
      await new Promise((r) => setTimeout(r, 10));
      const count = await api.commit(
        async (tx) => {
          const ledger = await tx.doc(Ledger, api.conversationId);
          ledger.items.push(item);
          await tx.appendEntry(api.conversationId, { kind: "app.booked", data: { item } });
          return ledger.items.length;
        },
        { key: `book ${item}` },
      );
      const ref = await api.memo("reference", () => `ref-${item}`);
      log.push(`end ${item}`);
      running--;
      return { content: `booked ${item} (${ref})`, details: { item, count } };
    },
  });
}

/** Tools v2: details, `api.commit`, `api.memo`, `sequential`. */
export const toolScenarios: readonly HarnessScenario[] = [
  {
    name: "a sequential tool's calls run one at a time in call order; their api.commit writes, memos and details are stored with their results",
    async run(storage, _reopen, models) {
      const log: string[] = [];
      const model = models({
        id: scriptId("tools-v2"),
        turns: [
          {
            toolCalls: [
              { name: "book", arguments: { item: "a" } },
              { name: "book", arguments: { item: "b" } },
            ],
          },
          { text: "booked both" },
        ],
      });
      const harness = await Harness.open(storage, { model, tools: [bookTool(log)] });
      try {
        const root = await harness.root();
        await (await root.submit({ type: "input", content: "book a and b" })).wait();
        check(
          JSON.stringify(log) === '["start a","end a","start b","end b"]',
          () => `the calls ran as ${JSON.stringify(log)}, expected a, then b`,
        );
        const ledger = await storedDoc(storage, "app.ledger", ROOT);
        check(
          JSON.stringify(ledger) === '{"items":["a","b"]}',
          () => `stored ledger: ${JSON.stringify(ledger)}`,
        );
        const entries = await root.entries();
        const booked = entries
          .filter((e) => e.kind === "app.booked")
          .map((e) => (e.data as { item: string }).item);
        check(
          JSON.stringify(booked) === '["a","b"]',
          () => `app.booked entries: ${JSON.stringify(booked)}`,
        );
        const results = entries.filter((e) => e.kind === "durably.tool-result");
        const details = results.map((e) => (e.data as { details?: unknown }).details);
        check(
          JSON.stringify(details) === '[{"item":"a","count":1},{"item":"b","count":2}]',
          () => `result details: ${JSON.stringify(details)}`,
        );
        const contents = results.map((e) => (e.model?.[0] as { content?: unknown }).content);
        check(
          JSON.stringify(contents) === '["booked a (ref-a)","booked b (ref-b)"]',
          () => `what the model gets must not hold the details: ${JSON.stringify(contents)}`,
        );
      } finally {
        await harness.close();
      }
    },
  },
  {
    name: "a safe tool rerun after a close gets its keyed api.commit and api.memo results back, so each effect happens once",
    persistent: true,
    async run(storage, reopen, models) {
      const script = {
        id: scriptId("tool-rerun"),
        turns: [{ toolCalls: [{ name: "order", arguments: {} }] }, { text: "ordered" }],
      };
      const effects: string[] = [];
      let blocked: () => void = () => undefined;
      const blocking = new Promise<void>((resolve) => (blocked = resolve));
      const order = (block: boolean): Tool =>
        defineTool({
          name: "order",
          description: "Orders, in two steps",
          parameters: { type: "object" },
          replay: "safe",
          execute: async (_args, api) => {
            await api.commit(
              async (tx) => {
                effects.push(`step 1 (attempt ${api.attempt})`);
                (await tx.doc(Ledger, api.conversationId)).items.push("step 1");
              },
              { key: "step 1" },
            );
            const charged = await api.memo("charge", () => {
              effects.push(`charge (attempt ${api.attempt})`);
              return "charge-42";
            });
            if (block) {
              blocked();
              await new Promise((_resolve, reject) =>
                api.signal.addEventListener("abort", () => reject(api.signal.reason as Error), {
                  once: true,
                }),
              );
            }
            await api.commit(
              async (tx) => {
                effects.push(`step 2 (attempt ${api.attempt})`);
                (await tx.doc(Ledger, api.conversationId)).items.push("step 2");
              },
              { key: "step 2" },
            );
            return { content: `ordered with ${charged}` };
          },
        });
      const first = await Harness.open(storage, { model: models(script), tools: [order(true)] });
      await (await first.root()).submit({ type: "input", content: "order" });
      await blocking;
      await first.close(); // mid-call: the tool reruns after the reopen
      const harness = await Harness.open(await (reopen as Reopen)(), {
        model: models(script),
        tools: [order(false)],
      });
      try {
        await harness.whenIdle();
        check(
          JSON.stringify(effects) ===
            '["step 1 (attempt 1)","charge (attempt 1)","step 2 (attempt 2)"]',
          () => `effects: ${JSON.stringify(effects)}; each must happen once, step 2 on the rerun`,
        );
        const root = await harness.root();
        const result = (await root.entries()).find((e) => e.kind === "durably.tool-result");
        check(
          (result?.model?.[0] as { content?: unknown } | undefined)?.content ===
            "ordered with charge-42" && (result?.data as { attempt?: number }).attempt === 2,
          () => `the rerun's result: ${JSON.stringify(result)}`,
        );
        const items = (await harness.session.snapshot(Ledger, ROOT))?.items;
        check(
          JSON.stringify(items) === '["step 1","step 2"]',
          () => `ledger: ${JSON.stringify(items)}`,
        );
      } finally {
        await harness.close();
      }
    },
  },
];
