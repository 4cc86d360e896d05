import type { Model, ModelRequest } from "@durably/core";

/** A model and every request the harness sent it, in order (what the model port was asked). */
export interface RecordingModel extends Model {
  readonly requests: ModelRequest[];
}

/**
 * Wraps the scenario's model to keep the requests the harness sends it,
 * whatever the model is (a ScriptedModel, an adapter over HTTP): what the
 * harness asked is checked at the port, the model answers as it would.
 */
export function recording(model: Model): RecordingModel {
  const requests: ModelRequest[] = [];
  return {
    requests,
    stream(request, options) {
      requests.push(request);
      return model.stream(request, options);
    },
    ...(model.contextWindow !== undefined ? { contextWindow: model.contextWindow } : {}),
    ...(model.prices !== undefined ? { prices: model.prices } : {}),
  };
}

/** The text of a request's messages, one line each, for failure messages. */
export function describeMessages(request: ModelRequest | undefined): string {
  if (!request) return "(no request)";
  return request.messages
    .map((m) => {
      const text =
        m.role === "assistant"
          ? m.content.map((p) => (p.type === "text" ? p.text : `[${p.type}]`)).join("")
          : typeof m.content === "string"
            ? m.content
            : JSON.stringify(m.content);
      return `${m.role}: ${text.length > 60 ? `${text.slice(0, 60)}…` : text}`;
    })
    .join(" | ");
}
