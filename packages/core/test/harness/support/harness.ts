import {
  defineTool,
  type ConversationId,
  type Json,
  type Model,
  type ModelEvent,
  type ModelRequest,
  type ModelStreamOptions,
  type Storage,
} from "../../../src/index.js";

export const add = defineTool<{ a: number; b: number }>({
  name: "add",
  description: "Add two numbers",
  parameters: {
    type: "object",
    properties: { a: { type: "number" }, b: { type: "number" } },
    required: ["a", "b"],
    additionalProperties: false,
  },
  replay: "safe",
  execute: async ({ a, b }, api) => {
    await api.output(`adding ${a} and ${b}`);
    return { content: String(a + b) };
  },
});

/** A tool that runs until released or aborted, streaming a line of output first. */
export function gateTool(name = "gate", replay: "safe" | "unsafe" = "unsafe") {
  let release: (() => void) | undefined;
  let started: (() => void) | undefined;
  const startedPromise = new Promise<void>((resolve) => (started = resolve));
  const tool = defineTool({
    name,
    description: "Waits for the test",
    parameters: { type: "object" },
    replay,
    execute: async (_args, api) => {
      await api.output("gate open; ");
      started?.();
      await new Promise<void>((resolve, reject) => {
        release = resolve;
        api.signal.addEventListener("abort", () => reject(api.signal.reason as Error), {
          once: true,
        });
      });
      return { content: "released" };
    },
  });
  return { tool, started: startedPromise, release: () => release?.() };
}

/**
 * A Model whose turns are functions of the request, streamed through a
 * gate: after `hold()`, each event needs an allowance (`allow(n)`) until
 * `open()`. It is the real port the harness calls, driven by the test.
 */
export class GatedModel implements Model {
  readonly requests: ModelRequest[] = [];
  private held = false;
  private allowance = 0;
  private wake: (() => void)[] = [];
  private emittedWaiters: { count: number; resolve: () => void }[] = [];
  emitted = 0;

  constructor(private readonly turn: (request: ModelRequest, index: number) => ModelEvent[]) {}

  hold(): void {
    this.held = true;
  }

  allow(n: number): void {
    this.allowance += n;
    this.notify();
  }

  open(): void {
    this.held = false;
    this.notify();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = [];
    for (const w of wake) w();
  }

  /** Resolves once `count` events were emitted in all. */
  emittedAtLeast(count: number): Promise<void> {
    if (this.emitted >= count) return Promise.resolve();
    return new Promise((resolve) => this.emittedWaiters.push({ count, resolve }));
  }

  async *stream(
    request: ModelRequest,
    options: ModelStreamOptions = {},
  ): AsyncGenerator<ModelEvent> {
    this.requests.push(request);
    for (const event of this.turn(request, this.requests.length - 1)) {
      while (this.held && this.allowance === 0) {
        await new Promise<void>((resolve, reject) => {
          this.wake.push(resolve);
          options.signal?.addEventListener("abort", () => reject(options.signal?.reason as Error), {
            once: true,
          });
        });
      }
      if (this.held) this.allowance--;
      options.signal?.throwIfAborted();
      yield event;
      this.emitted++;
      this.emittedWaiters = this.emittedWaiters.filter((w) => {
        if (this.emitted < w.count) return true;
        w.resolve();
        return false;
      });
    }
  }
}

export const text = (...chunks: string[]): ModelEvent[] => [
  ...chunks.map((delta) => ({ type: "text" as const, delta })),
  { type: "done", stopReason: "stop", usage: { inputTokens: 1, outputTokens: chunks.length } },
];

/** The stored value of a conversation's `durably.live`, read from storage itself (what a crash keeps). */
export async function storedDoc(
  storage: Storage,
  kind: string,
  conversationId: ConversationId,
): Promise<Json | undefined> {
  const record = await storage.findDocument(
    { kind, scope: { kind: "conversation", conversationId } },
    "current",
  );
  if (!record) return undefined;
  return (await storage.document(record.id, "current"))?.value;
}

/** A promise the test opens when it chooses. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open: () => void = () => undefined;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}
