import { contentText, defineTool, Harness, type Message, type Tool } from "@durably/core";
import { check } from "./invariants.js";
import { describeMessages, recording } from "./recording.js";
import type { HarnessScenario } from "./scenarios.js";
import { scriptId } from "./scripts.js";

const kinds = (entries: readonly { kind: string }[]): string =>
  entries.map((e) => e.kind).join(", ");

/** A "wait" tool that runs until `release` resolves; `started` resolves once it runs. */
function waitTool(): { tool: Tool; started: Promise<void>; release: () => void } {
  let release: () => void = () => undefined;
  let started: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  const running = new Promise<void>((resolve) => (started = resolve));
  const tool = defineTool({
    name: "wait",
    description: "Waits for something",
    parameters: { type: "object" },
    replay: "safe",
    execute: async () => {
      started();
      await released;
      return { content: "waited" };
    },
  });
  return { tool, started: running, release };
}

const roleText = (m: Message): string =>
  `${m.role}: ${m.role === "assistant" ? m.content.map((p) => (p.type === "text" ? p.text : "")).join("") : contentText(m.content)}`;

/** Steering and writes: inputs into the running answer, app entries through the inbox. */
export const steeringScenarios: readonly HarnessScenario[] = [
  {
    name: "an input steered in during a tool call lands after that tool's result and before the next model call, and settles with the run",
    async run(storage, _reopen, models) {
      const { tool, started, release } = waitTool();
      const model = recording(
        models({
          id: scriptId("steer"),
          turns: [
            { text: "waiting", toolCalls: [{ name: "wait", arguments: {} }] },
            { text: "done, quickly" },
          ],
        }),
      );
      const harness = await Harness.open(storage, { model, tools: [tool] });
      try {
        const root = await harness.root();
        const first = await root.submit({ type: "input", content: "do it" });
        await started;
        const steer = await root.submit({
          type: "input",
          content: "be quick",
          whenBusy: "steer",
        });
        release();
        const settled = await first.wait();
        const steered = await steer.wait();
        check(
          settled.status === "done" &&
            steered.status === "done" &&
            steered.answer === settled.answer,
          () => `settled ${JSON.stringify(settled)}, steered ${JSON.stringify(steered)}`,
        );
        const second = model.requests[1];
        const sent = (second?.messages ?? []).map(roleText);
        check(
          model.requests.length === 2 &&
            JSON.stringify(sent.slice(-2)) === '["toolResult: waited","user: be quick"]',
          () => `${model.requests.length} requests; the second sent: ${describeMessages(second)}`,
        );
        const entries = await root.entries();
        check(
          kinds(entries) ===
            "durably.user, durably.assistant, durably.tool-result, durably.user, durably.assistant",
          () => `transcript: ${kinds(entries)}`,
        );
      } finally {
        await harness.close();
      }
    },
  },
  {
    name: "steering an idle conversation places the input as a normal one",
    async run(storage, _reopen, models) {
      const model = models({ id: scriptId("steer-idle"), turns: [{ text: "hi" }] });
      const harness = await Harness.open(storage, { model });
      try {
        const root = await harness.root();
        const steer = await root.submit({ type: "input", content: "hello", whenBusy: "steer" });
        const settled = await steer.wait();
        check(
          steer.submitted.status === "placed" && settled.status === "done",
          () => `submitted ${steer.submitted.status}, settled ${JSON.stringify(settled)}`,
        );
      } finally {
        await harness.close();
      }
    },
  },
  {
    name: "a write submitted while busy is appended in order with the inputs around it, without a model turn",
    async run(storage, _reopen, models) {
      const { tool, started, release } = waitTool();
      const model = recording(
        models({
          id: scriptId("write"),
          turns: [
            { toolCalls: [{ name: "wait", arguments: {} }] },
            { text: "first answered" },
            { text: "second answered" },
          ],
        }),
      );
      const harness = await Harness.open(storage, { model, tools: [tool] });
      try {
        const root = await harness.root();
        const a = await root.submit({ type: "input", content: "a" });
        await started;
        const w = await root.submit({
          type: "write",
          entry: { kind: "app.marker", data: { at: "between" } },
        });
        const b = await root.submit({ type: "input", content: "b" });
        release();
        await a.wait();
        const written = await w.wait();
        await b.wait();
        const entries = await root.entries();
        check(
          kinds(entries) ===
            "durably.user, durably.assistant, durably.tool-result, durably.assistant, app.marker, durably.user, durably.assistant",
          () => `transcript: ${kinds(entries)}`,
        );
        check(
          written.status === "done" && written.answer === entries[4]?.id,
          () => `the write settled ${JSON.stringify(written)}`,
        );
        check(
          model.requests.length === 3,
          () => `${model.requests.length} model calls; the write must not make one`,
        );
      } finally {
        await harness.close();
      }
    },
  },
];
