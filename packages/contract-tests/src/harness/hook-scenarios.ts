import { Harness, type Hooks, type ModelRequest } from "@durably/core";
import type { Reopen } from "../storage/api.js";
import { check } from "./invariants.js";
import { recording } from "./recording.js";
import type { HarnessScenario } from "./scenarios.js";
import { scenarioTools, scriptId } from "./scripts.js";

const kinds = (entries: readonly { kind: string }[]): string =>
  entries.map((e) => e.kind).join(", ");

const tools = () =>
  scenarioTools("parent", { running: () => undefined, executed: () => undefined });

/** Hooks: plain functions around a run's steps. */
export const hookScenarios: readonly HarnessScenario[] = [
  {
    name: "hooks see and change each step: beforeRequest's request is sent, afterTool's result is stored, beforeTool can block",
    async run(storage, _reopen, models) {
      const model = recording(
        models({
          id: scriptId("hooks"),
          turns: [
            {
              toolCalls: [
                { name: "add", arguments: { a: 2, b: 3 } },
                { name: "charge", arguments: { amount: 5 } },
              ],
            },
            { text: "2 + 3 = 5" },
          ],
        }),
      );
      const answers: string[] = [];
      const hooks: Hooks = {
        beforeRequest: (request: ModelRequest) => ({ ...request, system: "Answer tersely." }),
        afterResponse: (message) => void answers.push(message.stopReason),
        beforeTool: (call) => (call.name === "charge" ? { block: "no charges" } : undefined),
        afterTool: (_call, result) => ({ ...result, details: { checked: true } }),
      };
      const harness = await Harness.open(storage, { model, tools: tools(), hooks });
      try {
        const root = await harness.root();
        const settled = await (await root.submit({ type: "input", content: "2+3?" })).wait();
        check(settled.status === "done", () => `settled ${JSON.stringify(settled)}`);
        check(
          model.requests.every((r) => r.system === "Answer tersely."),
          () => `systems sent: ${JSON.stringify(model.requests.map((r) => r.system))}`,
        );
        check(
          JSON.stringify(answers) === '["toolUse","stop"]',
          () => `afterResponse saw ${JSON.stringify(answers)}`,
        );
        const results = (await root.entries()).filter((e) => e.kind === "durably.tool-result");
        // The two calls run concurrently: their results are stored in whichever order they end.
        const summary = results.map((e) => [
          (e.model?.[0] as { content?: unknown }).content,
          (e.data as { details?: unknown }).details ?? null,
        ]);
        summary.sort((a, b) => String(a[0]).localeCompare(String(b[0])));
        check(
          JSON.stringify(summary) === '[["5",{"checked":true}],["blocked: no charges",null]]',
          () => `stored results: ${JSON.stringify(summary)}`,
        );
      } finally {
        await harness.close();
      }
    },
  },
  {
    name: "a beforeRequest hook returning a request that is not JSON settles the run hook-failed (HOOK_INVALID); only the input is stored",
    async run(storage, _reopen, models) {
      const model = recording(models({ id: scriptId("hook-invalid"), turns: [{ text: "no" }] }));
      const harness = await Harness.open(storage, {
        model,
        hooks: {
          beforeRequest: (request) =>
            ({ ...request, settings: { seed: BigInt(1) } }) as unknown as ModelRequest,
        },
      });
      try {
        const root = await harness.root();
        const settled = await (await root.submit({ type: "input", content: "hi" })).wait();
        const detail = settled.detail as { code?: string; message?: string } | undefined;
        check(
          settled.status === "unanswered" &&
            settled.reason === "hook-failed" &&
            detail?.code === "HOOK_INVALID" &&
            detail.message?.includes("request.settings.seed") === true,
          () => `settled ${JSON.stringify(settled)}`,
        );
        const entries = await root.entries();
        check(
          kinds(entries) === "durably.user" && model.requests.length === 0,
          () => `stored ${kinds(entries)}; the model got ${model.requests.length} requests`,
        );
      } finally {
        await harness.close();
      }
    },
  },
  {
    name: "a conversation configured with a hook set the reopened harness lacks settles its next run unknown-hooks, naming it",
    persistent: true,
    async run(storage, reopen, models) {
      const script = { id: scriptId("unknown-hooks"), turns: [{ text: "a" }, { text: "b" }] };
      const first = await Harness.open(storage, {
        model: models(script),
        hookSets: { audit: { afterResponse: () => undefined } },
      });
      try {
        const root = await first.root();
        await root.configure({ hooks: ["audit"] });
        await (await root.submit({ type: "input", content: "one" })).wait();
      } finally {
        await first.close();
      }
      const again = await Harness.open(await (reopen as Reopen)(), { model: models(script) });
      try {
        const root = await again.root();
        const settled = await (await root.submit({ type: "input", content: "two" })).wait();
        const message = (settled.detail as { message?: string } | undefined)?.message ?? "";
        check(
          settled.reason === "unknown-hooks" && message.includes('"audit"'),
          () => `settled ${JSON.stringify(settled)}`,
        );
      } finally {
        await again.close();
      }
    },
  },
];
