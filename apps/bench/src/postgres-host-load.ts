import { randomUUID } from "node:crypto";
import { Session, type ConversationId } from "@durably/core";
import { openPostgresHost, type PostgresHostStats } from "@durably/storage-postgres";
import { concurrentLoops } from "./harness.js";
import { createWriterConversations, sessionStep } from "./workload.js";

/** A host's sessions with writers ready to commit, in this process. */
export interface HostLoad {
  /** Commits until `deadline` (performance.now() time) with every writer; returns how many. */
  run(deadline: number): Promise<number>;
  stats(): PostgresHostStats;
  close(): Promise<void>;
}

/**
 * Opens one PostgresHost (default maxConnections 8) with `sessions` fresh
 * sessions and `perSession` writers in each, every writer with its own
 * conversation: the load of one app-server process.
 */
export async function openHostLoad(
  url: string,
  sessions: number,
  perSession: number,
  parameterized = false,
): Promise<HostLoad> {
  const host = await openPostgresHost({
    connectionString: url,
    parameterizedCommits: parameterized,
  });
  const opened: { session: Session; conversations: ConversationId[] }[] = [];
  for (let i = 0; i < sessions; i++) {
    const session = await Session.open(await host.open(`bench-${randomUUID()}`));
    opened.push({ session, conversations: await createWriterConversations(session, perSession) });
  }
  let n = 0;
  return {
    run: (deadline) =>
      concurrentLoops(sessions * perSession, deadline, (w) => {
        const { session, conversations } = opened[Math.floor(w / perSession)]!;
        return session.commit((tx) =>
          sessionStep(tx, conversations[w % perSession] as ConversationId, ++n),
        );
      }),
    stats: () => host.stats(),
    close: async () => {
      for (const { session } of opened) await session.close();
      await host.close();
    },
  };
}
