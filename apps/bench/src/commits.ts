import { Session, type ConversationId } from "@durably/core";
import { BACKENDS, type Backend } from "./backends.js";
import { concurrentLoops, type CommitCase } from "./harness.js";
import type { Scratch } from "./paths.js";
import { createWriterConversations, sessionStep } from "./workload.js";

/**
 * Session commits/s on one backend with `writers` concurrent writers, each
 * committing the workload step to its own conversation and awaiting it
 * before the next: with many writers, group commit shares storage calls.
 */
export function sessionCase(backend: Backend, writers: number, scratch: Scratch): CommitCase {
  return {
    id: `session/${backend.id}/${writers}`,
    family: "session",
    label: `Session.commit, ${backend.label}, ${writers} writer${writers === 1 ? "" : "s"}`,
    backend: backend.id,
    writers,
    async open() {
      const session = await Session.open(await backend.open(scratch.path(backend.id)));
      const conversations = await createWriterConversations(session, writers);
      let n = 0;
      return {
        run: (deadline) =>
          concurrentLoops(writers, deadline, (w) =>
            session.commit((tx) => sessionStep(tx, conversations[w] as ConversationId, ++n)),
          ),
        stats: () => session.commitStats,
        close: () => session.close(),
      };
    },
  };
}

/** Every backend with one writer and with `writers` writers. */
export function sessionCases(writers: number, scratch: Scratch): CommitCase[] {
  return BACKENDS.flatMap((b) => [sessionCase(b, 1, scratch), sessionCase(b, writers, scratch)]);
}
