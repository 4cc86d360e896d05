import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3StreamPart,
  SharedV3ProviderOptions,
} from "@ai-sdk/provider";
import type {
  Model,
  ModelError,
  ModelEvent,
  ModelPrices,
  ModelRequest,
  ModelSettings,
  ModelStreamOptions,
} from "@durably/core";
import { classifyError, redact } from "./errors.js";
import { toPrompt, toTools } from "./prompt.js";
import {
  callSettings,
  checkProviderOptions,
  checkSettings,
  mergeProviderOptions,
  type CallSettings,
} from "./settings.js";
import { StreamTranslator } from "./stream-events.js";

export interface AiSdkModelOptions {
  /**
   * Settings for every call, checked when the model is made; a request's own
   * settings override them key by key (its `providerOptions` provider by
   * provider).
   */
  settings?: ModelSettings;
  /**
   * Provider options for every call, or a function of the request (to key
   * a provider's prompt cache by `request.conversationId`, say). Laid under
   * `settings.providerOptions`, provider by provider.
   */
  providerOptions?:
    SharedV3ProviderOptions | ((request: ModelRequest) => SharedV3ProviderOptions | undefined);
  /** HTTP headers for every call. Sent only: never stored, shown or put in an error. */
  headers?: Readonly<Record<string, string>>;
  /** Strings (API keys) removed from error messages, in case a provider echoes one back. */
  redact?: readonly string[];
  /** Milliseconds since the epoch, to turn a `Retry-After` date into a wait (default `Date.now`). */
  clock?: () => number;
  /**
   * What the model costs per million tokens (in the unit you give: the
   * usage ledger adds them up as they are): the harness then records each
   * call's `cost`. The AI SDK does not know prices, so nothing is assumed.
   */
  prices?: ModelPrices;
  /**
   * Tokens the model's context holds (input and output): with it, the
   * harness compacts a conversation automatically before it overflows.
   */
  contextWindow?: number;
}

type ErrorEvent = Extract<ModelEvent, { type: "error" }>;

const PRICE_FIELDS = ["inputPerMillion", "outputPerMillion", "cachedInputPerMillion"];

function checkPrices(prices: unknown): ModelPrices {
  if (typeof prices !== "object" || prices === null || Array.isArray(prices))
    throw new TypeError(
      "aiSdkModel: options.prices must be { inputPerMillion, outputPerMillion, cachedInputPerMillion? }",
    );
  const p = prices as Record<string, unknown>;
  for (const key of Object.keys(p))
    if (!PRICE_FIELDS.includes(key))
      throw new TypeError(
        `aiSdkModel: options.prices.${key} is not a price (${PRICE_FIELDS.join(", ")})`,
      );
  for (const key of PRICE_FIELDS) {
    const n = p[key];
    if (n === undefined && key === "cachedInputPerMillion") continue;
    if (!(typeof n === "number" && Number.isFinite(n) && n >= 0))
      throw new TypeError(`aiSdkModel: options.prices.${key} must be a non-negative number`);
  }
  return { ...(p as unknown as ModelPrices) };
}

/**
 * Resolves with `promise`, or rejects with the signal's reason as soon as it
 * aborts. What `promise` brings after the abort is handed to `abandon` (to
 * release it); a failure after the abort is observed and dropped, so neither
 * leaks nor becomes an unhandled rejection.
 */
function untilAborted<T>(
  promise: PromiseLike<T>,
  signal: AbortSignal | undefined,
  abandon: (late: T) => void,
): Promise<T> {
  if (!signal) return Promise.resolve(promise);
  return new Promise<T>((resolve, reject) => {
    let aborted = false;
    const onAbort = (): void => {
      aborted = true;
      reject(signal.reason as Error);
    };
    Promise.resolve(promise).then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        if (aborted) abandon(value);
        else resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        // Passed on as the provider threw it (not always an Error): the caller classifies it.
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
        if (!aborted) reject(error);
      },
    );
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** Cancels the stream of a `doStream` result nobody will read; never throws or rejects. */
function cancelStream(result: unknown, reason: unknown): void {
  const stream = (result as { stream?: { cancel?: unknown } } | null | undefined)?.stream;
  if (typeof stream?.cancel !== "function") return;
  Promise.resolve()
    .then(() => (stream.cancel as (reason: unknown) => unknown).call(stream, reason))
    .catch(() => undefined);
}

/**
 * A Durably `Model` over an AI SDK `LanguageModelV3`. Each `stream` call is
 * one `doStream` call: no retries here (the harness retries durably), no
 * state kept between calls.
 */
export class AiSdkModel implements Model {
  private readonly clock: () => number;
  private readonly secrets: readonly string[];
  private readonly defaults: CallSettings;
  readonly prices?: ModelPrices;
  readonly contextWindow?: number;

  constructor(
    readonly languageModel: LanguageModelV3,
    private readonly options: AiSdkModelOptions = {},
  ) {
    this.clock = options.clock ?? Date.now;
    this.secrets = (options.redact ?? []).filter((s) => typeof s === "string" && s !== "");
    // A bad default would fail every call: refused here, with the error a request's settings get.
    this.defaults = checkSettings(options.settings, "aiSdkModel: options.settings");
    const configured: unknown = options.providerOptions;
    if (typeof configured !== "function" && configured !== undefined)
      checkProviderOptions(configured, "aiSdkModel: options.providerOptions");
    // Checked here, where they are given (the harness checks them again when registered).
    if (options.prices !== undefined) this.prices = checkPrices(options.prices);
    if (options.contextWindow !== undefined) {
      if (!Number.isSafeInteger(options.contextWindow) || options.contextWindow < 1)
        throw new TypeError(
          "aiSdkModel: options.contextWindow must be a positive integer number of tokens",
        );
      this.contextWindow = options.contextWindow;
    }
  }

  private error(error: ModelError): ErrorEvent {
    return {
      type: "error",
      ...error,
      message: redact(error.message, this.secrets),
      ...(error.code !== undefined ? { code: redact(error.code, this.secrets) } : {}),
    };
  }

  private classify(error: unknown): ErrorEvent {
    return this.error(classifyError(error, this.clock()));
  }

  /** The AI SDK call options for a request (throws a `TypeError` for bad settings). */
  callOptions(request: ModelRequest, signal?: AbortSignal): LanguageModelV3CallOptions {
    const { providerOptions: fromSettings, ...settings } = callSettings(
      this.defaults,
      request.settings,
    );
    const configured = this.options.providerOptions;
    const made = typeof configured === "function" ? configured(request) : configured;
    // A function's result is checked on each call; an object was checked when the model was made.
    const base =
      typeof configured === "function" && made !== undefined
        ? checkProviderOptions(made, "options.providerOptions(request)")
        : made;
    const providerOptions = mergeProviderOptions(base, fromSettings);
    const tools = toTools(request.tools);
    return {
      prompt: toPrompt(request),
      ...settings,
      ...(tools.length > 0 ? { tools, toolChoice: { type: "auto" } } : {}),
      ...(providerOptions ? { providerOptions } : {}),
      ...(this.options.headers ? { headers: { ...this.options.headers } } : {}),
      ...(signal ? { abortSignal: signal } : {}),
    };
  }

  async *stream(
    request: ModelRequest,
    options: ModelStreamOptions = {},
  ): AsyncGenerator<ModelEvent> {
    const { signal } = options;
    signal?.throwIfAborted();
    let call: LanguageModelV3CallOptions;
    try {
      call = this.callOptions(request, signal);
    } catch (error) {
      yield this.error({
        message: (error as Error).message,
        code: "INVALID_SETTINGS",
        kind: "invalid",
        retryable: false,
      });
      return;
    }
    let stream: ReadableStream<LanguageModelV3StreamPart>;
    try {
      // Inside the try: a provider that throws synchronously is caught like one that rejects.
      const result = await untilAborted(
        Promise.resolve().then(() => this.languageModel.doStream(call)),
        signal,
        // A provider that ignores the signal resolves anyway: its stream is never read.
        (late) => cancelStream(late, signal?.reason),
      );
      if (typeof result?.stream?.getReader !== "function")
        throw new TypeError(`${this.languageModel.provider}: doStream resolved without a stream`);
      stream = result.stream;
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      yield this.classify(error);
      return;
    }
    yield* this.read(stream, signal);
  }

  private async *read(
    stream: ReadableStream<LanguageModelV3StreamPart>,
    signal: AbortSignal | undefined,
  ): AsyncGenerator<ModelEvent> {
    const reader = stream.getReader();
    // A provider stream that ignores the signal still ends: cancelling resolves the pending read.
    const onAbort = (): void => void reader.cancel(signal?.reason).catch(() => undefined);
    signal?.addEventListener("abort", onAbort, { once: true });
    const translator = new StreamTranslator();
    const events: ModelEvent[] = [];
    let finished = false;
    try {
      // Aborted before the listener was added (it never fires then): stop, and cancel below.
      if (signal?.aborted) throw signal.reason;
      for (;;) {
        let next: Awaited<
          ReturnType<ReadableStreamDefaultReader<LanguageModelV3StreamPart>["read"]>
        >;
        try {
          next = await reader.read();
        } catch (error) {
          if (signal?.aborted) throw signal.reason;
          yield this.classify(error);
          return;
        }
        if (signal?.aborted) throw signal.reason;
        if (next.done) {
          yield translator.ended();
          return;
        }
        const part: unknown = next.value;
        if (typeof part === "object" && part !== null && "type" in part && part.type === "error") {
          yield this.classify((part as { error?: unknown }).error);
          return;
        }
        events.length = 0;
        translator.push(part, events);
        for (const event of events) {
          if (event.type === "error") {
            yield this.error(event);
            return;
          }
          yield event;
          if (event.type === "done") {
            finished = true;
            return;
          }
        }
      }
    } finally {
      signal?.removeEventListener("abort", onAbort);
      // Stopped early (an error, an abort, a consumer that left): release the connection.
      if (!finished)
        void reader.cancel(signal?.aborted ? signal.reason : undefined).catch(() => undefined);
      reader.releaseLock();
    }
  }
}

/**
 * Adapts any Vercel AI SDK language model (`LanguageModelV3`: OpenAI,
 * Anthropic, Google, Mistral, Ollama, any OpenAI-compatible server) to the
 * Durably `Model` port.
 */
export function aiSdkModel(
  languageModel: LanguageModelV3,
  options?: AiSdkModelOptions,
): AiSdkModel {
  if (typeof languageModel !== "object" || languageModel === null)
    throw new TypeError("aiSdkModel: languageModel must be an AI SDK language model");
  if (languageModel.specificationVersion !== "v3")
    throw new TypeError(
      `aiSdkModel: ${String(languageModel.provider)} ${String(languageModel.modelId)} implements specification ${JSON.stringify(languageModel.specificationVersion)}, not "v3" (the AI SDK 6 providers implement v3)`,
    );
  if (typeof languageModel.doStream !== "function")
    throw new TypeError("aiSdkModel: languageModel.doStream must be a function");
  return new AiSdkModel(languageModel, options);
}
