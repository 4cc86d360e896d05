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
      // A fresh start (`beforeRound`) gets a fresh path: `scratch.path` never repeats one.
      const start = async () => {
        const session = await Session.open(await backend.open(scratch.path(backend.id)));
        return { session, conversations: await createWriterConversations(session, writers) };
      };
      let now = await start();
      // Calls and batches of the sessions a fresh start closed.
      const closed = { calls: 0, batches: 0 };
      let n = 0;
      return {
        run: (deadline) =>
          concurrentLoops(writers, deadline, (w) =>
            now.session.commit((tx) =>
              sessionStep(tx, now.conversations[w] as ConversationId, ++n),
            ),
          ),
        ...(backend.freshEachRound
          ? {
              beforeRound: async () => {
                closed.calls += now.session.commitStats.calls;
                closed.batches += now.session.commitStats.batches;
                await now.session.close();
                now = await start();
              },
            }
          : {}),
        stats: () => ({
          calls: closed.calls + now.session.commitStats.calls,
          batches: closed.batches + now.session.commitStats.batches,
        }),
        close: () => now.session.close(),
      };
    },
  };
}

/** Every backend with one writer and with `writers` writers. */
export function sessionCases(writers: number, scratch: Scratch): CommitCase[] {
  return BACKENDS.flatMap((b) => [sessionCase(b, 1, scratch), sessionCase(b, writers, scratch)]);
}
