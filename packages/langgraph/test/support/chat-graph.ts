import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { tool } from "@langchain/core/tools";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { z } from "zod";

/**
 * A deterministic chat model (no network): it asks for the `lookup` tool
 * until the conversation holds `rounds` tool results, then answers. Each
 * answer depends only on the messages it is given, so a rerun after a crash
 * gets the same answer.
 */
export class ScriptedToolModel extends BaseChatModel {
  constructor(
    private readonly rounds: number,
    private readonly onCall: (round: number) => void = () => undefined,
  ) {
    super({});
  }

  _llmType(): string {
    return "scripted-tool-model";
  }

  // eslint-disable-next-line @typescript-eslint/require-await
  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const results = messages.filter((m) => m.getType() === "tool").length;
    this.onCall(results + 1);
    const message =
      results < this.rounds
        ? new AIMessage({
            content: `I will look up item ${results + 1}.`,
            tool_calls: [{ id: `call-${results + 1}`, name: "lookup", args: { n: results + 1 } }],
          })
        : new AIMessage({ content: `Done: looked up ${results} items.` });
    return { generations: [{ text: textOf(message.content), message }] };
  }
}

export interface ChatGraphHooks {
  /** Called when the tool starts for item `n`; may return a promise the tool waits for. */
  onTool?: (n: number) => void | Promise<void>;
  onModel?: (round: number) => void;
}

/** StateGraph(MessagesAnnotation): agent → tools → agent … → END, with a ToolNode. */
export function chatGraph(
  checkpointer: BaseCheckpointSaver,
  rounds: number,
  hooks: ChatGraphHooks = {},
) {
  const lookup = tool(
    async ({ n }: { n: number }) => {
      await hooks.onTool?.(n);
      return `item ${n} is ${"x".repeat(n % 7)}${n * n}`;
    },
    { name: "lookup", description: "Looks up item n.", schema: z.object({ n: z.number() }) },
  );
  const model = new ScriptedToolModel(rounds, hooks.onModel);
  const agent = async (state: typeof MessagesAnnotation.State) => ({
    messages: [await model.invoke(state.messages)],
  });
  const route = (state: typeof MessagesAnnotation.State) => {
    const last = state.messages[state.messages.length - 1] as AIMessage;
    return last.tool_calls && last.tool_calls.length > 0 ? "tools" : END;
  };
  return new StateGraph(MessagesAnnotation)
    .addNode("agent", agent)
    .addNode("tools", new ToolNode([lookup]))
    .addEdge(START, "agent")
    .addConditionalEdges("agent", route, ["tools", END])
    .addEdge("tools", "agent")
    .compile({ checkpointer });
}

const textOf = (content: unknown): string =>
  typeof content === "string" ? content : JSON.stringify(content);

/** The messages of a graph state read back (`getState().values` is untyped). */
export function messagesOf(values: unknown): BaseMessage[] {
  const messages = (values as { messages?: BaseMessage[] } | undefined)?.messages;
  return messages ?? [];
}

/** What a transcript says, without the random message ids. */
export function transcript(messages: readonly BaseMessage[]): string[] {
  return messages.map((m) => {
    const calls = (m as AIMessage).tool_calls?.map((c) => `${c.name}(${JSON.stringify(c.args)})`);
    return `${m.getType()}: ${textOf(m.content)}${calls && calls.length > 0 ? ` ${calls.join(",")}` : ""}`;
  });
}
