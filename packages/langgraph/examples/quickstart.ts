// A LangGraph chat whose checkpoints live in a Durably SQLite file.
//   node --conditions=@durably/source --import tsx examples/quickstart.ts [file]
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { DurablyCheckpointSaver } from "@durably/langgraph";
import { openSqliteStorage } from "@durably/storage-sqlite";

const checkpointer = new DurablyCheckpointSaver(
  await openSqliteStorage(process.argv[2] ?? "chat.sqlite"),
);
const graph = new StateGraph(MessagesAnnotation)
  .addNode("echo", ({ messages }) => ({
    messages: [new AIMessage(`you said: ${messages.at(-1)?.text ?? ""}`)],
  }))
  .addEdge(START, "echo")
  .addEdge("echo", END)
  .compile({ checkpointer });

const config = { configurable: { thread_id: "user-42" } };
await graph.invoke({ messages: [new HumanMessage("hello")] }, config);
const state = await graph.getState(config);
const values = state.values as typeof MessagesAnnotation.State;
console.log(values.messages.map((m) => m.content));
await checkpointer.close();
