import type { LanguageModelV3StreamPart } from "@ai-sdk/provider";
import {
  ROOT_CONVERSATION_ID,
  type ModelEvent,
  type ModelRequest,
  type ModelSettings,
} from "@durably/core";
import { convertArrayToReadableStream, MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { aiSdkModel, type AiSdkModelOptions } from "../src/index.js";

const done: LanguageModelV3StreamPart = {
  type: "finish",
  finishReason: { unified: "stop", raw: "stop" },
  usage: {
    inputTokens: { total: 1, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: 1, text: undefined, reasoning: undefined },
  },
};

const provider = () =>
  new MockLanguageModelV3({
    doStream: () => Promise.resolve({ stream: convertArrayToReadableStream([done]) }),
  });

const request = (settings?: ModelSettings): ModelRequest => ({
  messages: [{ role: "user", content: "hi" }],
  tools: [],
  conversationId: ROOT_CONVERSATION_ID,
  ...(settings ? { settings } : {}),
});

/** The events of one call, and what reached the provider. */
async function run(settings: ModelSettings | undefined, options: AiSdkModelOptions = {}) {
  const mock = provider();
  const events: ModelEvent[] = [];
  for await (const event of aiSdkModel(mock, options).stream(request(settings))) events.push(event);
  return { events, calls: mock.doStreamCalls };
}

const refused = (message: RegExp) => [
  {
    type: "error",
    message: expect.stringMatching(message) as string,
    code: "INVALID_SETTINGS",
    kind: "invalid",
    retryable: false,
  },
];

describe("aiSdkModel settings: checked values, checked defaults, merged provider options", () => {
  it("refuses out-of-range values with the setting named, and sends nothing", async () => {
    const cases: [ModelSettings, RegExp][] = [
      [{ maxOutputTokens: -5 }, /settings\.maxOutputTokens: must be an integer of 1 or more/],
      [{ maxOutputTokens: 0 }, /settings\.maxOutputTokens: must be an integer of 1 or more/],
      [{ topK: -1 }, /settings\.topK: must be an integer of 1 or more/],
      [{ topK: 2.5 }, /settings\.topK: must be an integer of 1 or more/],
      [{ temperature: -3 }, /settings\.temperature: must be 0 or more/],
      [{ topP: 1.5 }, /settings\.topP: must be between 0 and 1/],
      [{ topP: -0.1 }, /settings\.topP: must be between 0 and 1/],
    ];
    for (const [settings, message] of cases) {
      const { events, calls } = await run(settings);
      expect(events, JSON.stringify(settings)).toEqual(refused(message));
      expect(calls).toHaveLength(0);
    }
  });

  it("sends the edges of each range", async () => {
    const { calls } = await run({
      maxOutputTokens: 1,
      topK: 1,
      temperature: 0,
      topP: 1,
      presencePenalty: -1.5,
      frequencyPenalty: 2,
      seed: -7,
    });
    expect(calls[0]).toMatchObject({
      maxOutputTokens: 1,
      topK: 1,
      temperature: 0,
      topP: 1,
      presencePenalty: -1.5,
      frequencyPenalty: 2,
      seed: -7,
    });
  });

  it("checks options.settings and options.providerOptions when the model is made", () => {
    const make = (options: AiSdkModelOptions) => () => aiSdkModel(provider(), options);
    expect(make({ settings: { maxTokens: 100 } })).toThrow(TypeError);
    expect(make({ settings: { maxTokens: 100 } })).toThrow(
      /aiSdkModel: options\.settings\.maxTokens: not a setting/,
    );
    expect(make({ settings: { maxOutputTokens: 0 } })).toThrow(
      /options\.settings\.maxOutputTokens: must be an integer of 1 or more/,
    );
    expect(make({ settings: { providerOptions: { openai: "gpt" } } })).toThrow(
      /options\.settings\.providerOptions\.openai: must be an object of that provider's options/,
    );
    expect(
      make({
        providerOptions: { openai: "gpt" } as unknown as AiSdkModelOptions["providerOptions"],
      }),
    ).toThrow(/aiSdkModel: options\.providerOptions\.openai: must be an object/);
  });

  it("refuses, per call, provider options made by a function that are not per-provider objects", async () => {
    const { events, calls } = await run(undefined, {
      providerOptions: () => ({ openai: "gpt" }) as unknown as Record<string, never>,
    });
    expect(events).toEqual(
      refused(/options\.providerOptions\(request\)\.openai: must be an object/),
    );
    expect(calls).toHaveLength(0);
  });

  it("merges a request's settings.providerOptions with the defaults' provider by provider", async () => {
    const { calls } = await run(
      {
        providerOptions: {
          openai: { user: "u" },
          anthropic: { thinking: { type: "disabled" }, sendReasoning: true },
        },
      },
      {
        settings: {
          temperature: 0.3,
          providerOptions: {
            anthropic: { thinking: { type: "enabled", budgetTokens: 2048 }, cacheControl: true },
            google: { safety: "low" },
          },
        },
        providerOptions: { openai: { promptCacheKey: "k", user: "base" } },
      },
    );
    expect(calls[0]?.temperature).toBe(0.3);
    expect(calls[0]?.providerOptions).toEqual({
      // options.providerOptions, under the request's entry for the same provider
      openai: { promptCacheKey: "k", user: "u" },
      // the request's entry wins key by key over the default settings' (shallow)
      anthropic: { thinking: { type: "disabled" }, cacheControl: true, sendReasoning: true },
      // kept from the default settings
      google: { safety: "low" },
    });
  });
});
