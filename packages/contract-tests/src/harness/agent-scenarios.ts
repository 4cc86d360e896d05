import { Harness, ROOT_CONVERSATION_ID as ROOT, type Tool } from "@durably/core";
import type { Reopen } from "../storage/api.js";
import { check, storedDoc } from "./invariants.js";
import { recording } from "./recording.js";
import type { HarnessScenario } from "./scenarios.js";
import { scenarioTools, scriptId } from "./scripts.js";

const tools = (): Tool[] =>
  scenarioTools("parent", { running: () => undefined, executed: () => undefined });

/** Per-conversation agents: `conversation.configure`, stored in `durably.agent`. */
export const agentScenarios: readonly HarnessScenario[] = [
  {
    name: "a conversation's configuration is stored in durably.agent and picks the model, tools and instructions of the next call",
    async run(storage, _reopen, models) {
      const base = recording(
        models({ id: scriptId("agent-default"), turns: [{ text: "from default" }] }),
      );
      const fast = recording(
        models({ id: scriptId("agent-fast"), turns: [{ text: "from fast" }] }),
      );
      const harness = await Harness.open(storage, {
        models: { default: base, fast },
        tools: tools(),
        instructions: [{ id: "persona", text: "Be careful." }],
      });
      try {
        const root = await harness.root();
        await root.configure({
          model: "fast",
          tools: ["add"],
          instructions: [{ id: "persona", text: "Be quick." }],
        });
        const stored = (await storedDoc(storage, "durably.agent", ROOT)) as Record<string, unknown>;
        check(
          JSON.stringify(stored) ===
            JSON.stringify({
              model: "fast",
              tools: ["add"],
              instructions: [{ id: "persona", text: "Be quick." }],
            }),
          () => `stored durably.agent: ${JSON.stringify(stored)}`,
        );
        const text = await (await root.submit({ type: "input", content: "q" })).answerText();
        check(
          text === "from fast",
          () => `answered ${JSON.stringify(text)}, expected the fast model's answer`,
        );
        const request = fast.requests[0];
        check(
          base.requests.length === 0 &&
            request?.system === "Be quick." &&
            JSON.stringify(request.tools.map((t) => t.name)) === '["add"]',
          () =>
            `the default model got ${base.requests.length} requests; the fast one got system ${JSON.stringify(request?.system)} and tools ${JSON.stringify(request?.tools.map((t) => t.name))}`,
        );
      } finally {
        await harness.close();
      }
    },
  },
  {
    name: "a configuration survives a reopen, and a fork starts with its parent's",
    persistent: true,
    async run(storage, reopen, models) {
      const script = { id: scriptId("agent-reopen"), turns: [{ text: "one" }, { text: "two" }] };
      const first = await Harness.open(storage, {
        models: { default: models(script), alt: models(script) },
        tools: tools(),
      });
      const root = await first.root();
      await (await root.submit({ type: "input", content: "q" })).wait();
      await root.configure({ model: "alt", tools: ["fetch", "add"] });
      await first.close();
      const harness = await Harness.open(await (reopen as Reopen)(), {
        models: { default: models(script), alt: models(script) },
        tools: tools(),
      });
      try {
        const again = await harness.root();
        const expected = JSON.stringify({ model: "alt", tools: ["fetch", "add"] });
        const stored = await again.configuration();
        check(
          JSON.stringify(stored) === expected,
          () => `after the reopen: ${JSON.stringify(stored)}`,
        );
        const fork = await again.fork();
        const forked = await fork.configuration();
        check(
          JSON.stringify(forked) === expected,
          () => `the fork's configuration: ${JSON.stringify(forked)}`,
        );
        await fork.configure({ tools: null });
        const parent = await again.configuration();
        check(
          JSON.stringify(parent) === expected,
          () => `the fork's change reached the parent: ${JSON.stringify(parent)}`,
        );
      } finally {
        await harness.close();
      }
    },
  },
  {
    name: "a harness reopened without a configured tool settles the next run unanswered, reason unknown-tool, naming it",
    persistent: true,
    async run(storage, reopen, models) {
      const script = { id: scriptId("agent-tool-gone"), turns: [{ text: "never" }] };
      const first = await Harness.open(storage, { model: models(script), tools: tools() });
      await (await first.root()).configure({ tools: ["add", "charge"] });
      await first.close();
      const withoutCharge = tools().filter((t) => t.name !== "charge");
      const model = recording(models(script));
      const harness = await Harness.open(await (reopen as Reopen)(), {
        model,
        tools: withoutCharge,
      });
      try {
        const root = await harness.root();
        const settled = await (await root.submit({ type: "input", content: "q" })).wait();
        const message = (settled.detail as { message?: string } | undefined)?.message ?? "";
        check(
          settled.status === "unanswered" &&
            settled.reason === "unknown-tool" &&
            message.includes('"charge"'),
          () => `expected unanswered unknown-tool naming "charge", got ${JSON.stringify(settled)}`,
        );
        check(
          model.requests.length === 0,
          () => `the model was called ${model.requests.length} times`,
        );
        // Reconfigured with the tools it has, the conversation answers again.
        await root.configure({ tools: ["add"] });
        const next = await (await root.submit({ type: "input", content: "q2" })).wait();
        check(next.status === "done", () => `after reconfiguring: ${JSON.stringify(next)}`);
      } finally {
        await harness.close();
      }
    },
  },
];
