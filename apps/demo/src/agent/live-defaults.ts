import type { LiveModelOptions } from "./live-model.js";

export interface ApproveAgentOptions {
  dir: string;
  question: string;
  /** A real model (as `demo agent --base-url` takes it); absent: the scripted one. */
  live?: LiveModelOptions;
}

/** Where `demo agent` on a real model keeps its SQLite file unless --dir says otherwise. */
export const DEFAULT_LIVE_DIR = "durably-agent";
/** Where `demo agent --approve` keeps its SQLite file (and its notes) unless --dir says otherwise. */
export const DEFAULT_APPROVE_DIR = "durably-agent-approve";
/** What `demo agent --approve` asks unless --question says otherwise. */
export const APPROVE_QUESTION = "What is 2 + 3? Save the answer as a note.";
