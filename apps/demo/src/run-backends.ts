import { join } from "node:path";
import { Session } from "@durably/core";
import type { Backend } from "./backends.js";
import { runExperiment, type ExperimentRun } from "./experiment.js";
import { readConversation, type ConversationState } from "./readback.js";

export interface BackendRun {
  backend: Backend;
  dir: string;
  run: ExperimentRun;
  /** What a fresh open of the same storage reads after close; undefined for memory. */
  reopened: ConversationState | undefined;
}

/** Runs the experiment on one backend in `dir`, closes it, and (if it persists) reopens and reads it again. */
export async function experimentOn(backend: Backend, dir: string): Promise<BackendRun> {
  const storage = await backend.open(dir);
  const session = await Session.open(storage);
  let run: ExperimentRun;
  try {
    run = await runExperiment(session, storage);
  } finally {
    await session.close();
  }
  let reopened: ConversationState | undefined;
  if (backend.persistent) {
    const again = await backend.open(dir);
    try {
      reopened = await readConversation(again, run.conversationId);
    } finally {
      await again.close();
    }
  }
  return { backend, dir, run, reopened };
}

export const backendDir = (root: string, step: string, backend: Backend): string =>
  join(root, step, backend.name);
