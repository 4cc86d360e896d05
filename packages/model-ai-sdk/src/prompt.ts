import type {
  LanguageModelV3FunctionTool,
  LanguageModelV3Message,
  LanguageModelV3Prompt,
  LanguageModelV3ToolResultOutput,
  LanguageModelV3ToolResultPart,
  SharedV3ProviderOptions,
} from "@ai-sdk/provider";
import type {
  AssistantMessage,
  ContentPart,
  JsonObject,
  ModelRequest,
  ToolResultMessage,
  ToolSpec,
} from "@durably/core";

type AssistantContent = Extract<LanguageModelV3Message, { role: "assistant" }>["content"];

/** Stored provider metadata goes back as the provider options it came from (signatures, ...). */
function options(metadata: JsonObject | undefined): { providerOptions?: SharedV3ProviderOptions } {
  return metadata ? { providerOptions: metadata as SharedV3ProviderOptions } : {};
}

function userContent(
  content: string | readonly ContentPart[],
): Extract<LanguageModelV3Message, { role: "user" }>["content"] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return content.map((part) =>
    part.type === "text"
      ? { type: "text", text: part.text }
      : { type: "file", mediaType: part.mediaType, data: part.data },
  );
}

function assistantContent(message: AssistantMessage): AssistantContent {
  return message.content.map((part): AssistantContent[number] => {
    switch (part.type) {
      case "text":
        return { type: "text", text: part.text };
      case "reasoning":
        return { type: "reasoning", text: part.text, ...options(part.providerMetadata) };
      case "toolCall":
        return {
          type: "tool-call",
          toolCallId: part.id,
          toolName: part.name,
          input: part.arguments,
          ...options(part.providerMetadata),
        };
    }
  });
}

/**
 * A tool's output: text (all of it, parts joined) as `text`, or `error-text`
 * when the tool failed, so the error flag survives and providers that send
 * tool results as strings get the text, not a JSON array of parts. A
 * successful result with images goes as `content` parts; a failed one stays
 * an error: its images (error results are text only) become a short note in
 * place.
 */
function toolOutput(message: ToolResultMessage): LanguageModelV3ToolResultOutput {
  const content = message.content;
  if (typeof content === "string" || content.every((part) => part.type === "text")) {
    const text =
      typeof content === "string"
        ? content
        : content.map((part) => (part.type === "text" ? part.text : "")).join("");
    return message.isError ? { type: "error-text", value: text } : { type: "text", value: text };
  }
  if (message.isError)
    return {
      type: "error-text",
      value: content
        .map((part) =>
          part.type === "text" ? part.text : `[${part.mediaType} image left out of this error]`,
        )
        .join(""),
    };
  return {
    type: "content",
    value: content.map((part) =>
      part.type === "text"
        ? { type: "text", text: part.text }
        : { type: "image-data", data: part.data, mediaType: part.mediaType },
    ),
  };
}

function toolResult(message: ToolResultMessage): LanguageModelV3ToolResultPart {
  return {
    type: "tool-result",
    toolCallId: message.toolCallId,
    toolName: message.toolName,
    output: toolOutput(message),
  };
}

/**
 * The AI SDK prompt for a request: the instructions as the system message,
 * then the messages in order. Consecutive tool results share one `tool`
 * message (how the AI SDK groups a round's results); an assistant message
 * with no parts at all is left out (providers refuse empty messages).
 */
export function toPrompt(
  request: Pick<ModelRequest, "system" | "messages">,
): LanguageModelV3Prompt {
  const prompt: LanguageModelV3Prompt = [];
  if (request.system !== undefined && request.system !== "")
    prompt.push({ role: "system", content: request.system });
  for (const message of request.messages) {
    if (message.role === "user") {
      prompt.push({ role: "user", content: userContent(message.content) });
    } else if (message.role === "assistant") {
      if (message.content.length > 0)
        prompt.push({ role: "assistant", content: assistantContent(message) });
    } else {
      const last = prompt.at(-1);
      if (last?.role === "tool") last.content.push(toolResult(message));
      else prompt.push({ role: "tool", content: [toolResult(message)] });
    }
  }
  return prompt;
}

/**
 * The tools as AI SDK function tools (the JSON Schema is passed as it is:
 * core's schema type also allows draft 04 and OpenAPI 3.0 forms, which the
 * JSON Schema 7 type does not name, so it is cast, not converted).
 */
export function toTools(tools: readonly ToolSpec[]): LanguageModelV3FunctionTool[] {
  return tools.map((tool) => ({
    type: "function",
    name: tool.name,
    description: tool.description,
    inputSchema: tool.parameters as LanguageModelV3FunctionTool["inputSchema"],
  }));
}
