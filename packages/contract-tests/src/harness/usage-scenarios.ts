import { Harness, type StorageWrite, type UsageState } from "@durably/core";
import type { Reopen } from "../storage/api.js";
import { check, storedSessionDoc } from "./invariants.js";
import type { HarnessScenario } from "./scenarios.js";
import { scriptId } from "./scripts.js";

const PRICES = { inputPerMillion: 3, outputPerMillion: 15 };

/** The usage ledger: `durably.usage`, written with each assistant entry. */
export const usageScenarios: readonly HarnessScenario[] = [
  {
    name: "each answer's usage is stored in durably.usage with its assistant entry, per conversation and per model, with the cost of priced models",
    async run(storage, _reopen, models) {
      const priced = models({
        id: scriptId("usage-priced"),
        turns: [
          { text: "one", usage: { inputTokens: 1_000, outputTokens: 100 } },
          { text: "two", usage: { inputTokens: 2_000, outputTokens: 200 } },
        ],
      });
      const plain = models({
        id: scriptId("usage-plain"),
        turns: [{ text: "three", usage: { inputTokens: 50, outputTokens: 5 } }],
      });
      const harness = await Harness.open(storage, {
        models: { default: { model: priced, prices: PRICES }, plain },
      });
      const withEntry: StorageWrite[][] = [];
      harness.session.subscribeCommits((event) => {
        if (event.writes.some((w) => w.type === "entry" && w.value.kind === "durably.assistant"))
          withEntry.push([...event.writes]);
      });
      try {
        const root = await harness.root();
        const other = await harness.createConversation();
        await (await root.submit({ type: "input", content: "a" })).wait();
        await (await root.submit({ type: "input", content: "b" })).wait();
        await (await other.submit({ type: "input", content: "c", model: "plain" })).wait();
        const created = withEntry[0]?.find(
          (w) => w.type === "document.create" && w.record.kind === "durably.usage",
        );
        const ledgerId = created?.type === "document.create" ? created.record.id : undefined;
        check(
          withEntry.length === 3 &&
            ledgerId !== undefined &&
            withEntry
              .slice(1)
              .every((writes) =>
                writes.some((w) => w.type === "document.change" && w.id === ledgerId),
              ),
          () =>
            `every commit storing an answer must write durably.usage (document ${ledgerId}) too: ${JSON.stringify(withEntry.map((ws) => ws.map((w) => (w.type === "entry" ? w.value.kind : w.type))))}`,
        );
        const ledger = (await storedSessionDoc(storage, "durably.usage")) as UsageState | undefined;
        const cost = (1_000 * 3 + 100 * 15 + 2_000 * 3 + 200 * 15) / 1e6;
        const mine = ledger?.conversations[String(root.id)];
        check(
          mine?.total.requests === 2 &&
            mine.total.inputTokens === 3_000 &&
            mine.total.outputTokens === 300 &&
            Math.abs((mine.total.cost ?? 0) - cost) < 1e-12 &&
            mine.models.default?.requests === 2,
          () =>
            `stored ledger for conversation ${root.id}: ${JSON.stringify(mine)}; expected 2 requests, 3000 in, 300 out, cost ${cost}`,
        );
        const theirs = ledger?.conversations[String(other.id)];
        check(
          theirs?.models.plain?.inputTokens === 50 &&
            theirs.total.cost === undefined &&
            theirs.total.unpriced === 1,
          () => `stored ledger for conversation ${other.id}: ${JSON.stringify(theirs)}`,
        );
        check(
          ledger?.total.requests === 3 &&
            ledger.models.default?.requests === 2 &&
            ledger.models.plain?.requests === 1,
          () =>
            `stored session totals: ${JSON.stringify({ total: ledger?.total, models: ledger?.models })}`,
        );
        const report = await harness.usage({ conversationId: root.id });
        check(
          JSON.stringify(report) === JSON.stringify({ total: mine?.total, models: mine?.models }),
          () => `harness.usage({ conversationId: ${root.id} }) = ${JSON.stringify(report)}`,
        );
      } finally {
        await harness.close();
      }
    },
  },
  {
    name: "the ledger survives a reopen and keeps counting",
    persistent: true,
    async run(storage, reopen, models) {
      const script = {
        id: scriptId("usage-reopen"),
        turns: [
          { text: "one", usage: { inputTokens: 10, outputTokens: 1 } },
          { text: "two", usage: { inputTokens: 20, outputTokens: 2 } },
        ],
      };
      const first = await Harness.open(storage, { model: models(script) });
      await (await (await first.root()).submit({ type: "input", content: "a" })).wait();
      await first.close();
      const harness = await Harness.open(await (reopen as Reopen)(), { model: models(script) });
      try {
        await (await (await harness.root()).submit({ type: "input", content: "b" })).wait();
        const { total } = await harness.usage();
        check(
          total.requests === 2 && total.inputTokens === 30 && total.outputTokens === 3,
          () => `after the reopen: ${JSON.stringify(total)}; expected 2 requests, 30 in, 3 out`,
        );
      } finally {
        await harness.close();
      }
    },
  },
];
