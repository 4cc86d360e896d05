import { randomUUID } from "node:crypto";
import type { ConversationId, StorageWrite } from "@durably/core";
import type { PostgresHost, PostgresStorage } from "../../src/index.js";

const C = 1 as ConversationId;

/**
 * Sessions on the same host committing in a loop, so the host's rounds mix
 * their calls with the ones under test. `stop` waits for the loops and
 * returns how many commits they stored. (No vitest import: crash children load it.)
 */
export function startNeighbours(
  host: PostgresHost,
  count: number,
): { stop(): Promise<{ sessions: string[]; commits: number }> } {
  const sessions = Array.from({ length: count }, () => `neighbour-${randomUUID()}`);
  let stopped = false;
  let commits = 0;
  const loops = sessions.map(async (session) => {
    let storage: PostgresStorage;
    try {
      storage = await host.open(session);
    } catch {
      return; // the host closed before this neighbour started
    }
    let id = 1;
    try {
      await storage.commit([[{ type: "conversation", value: { id: C } }]], () => undefined);
      while (!stopped) {
        const writes: StorageWrite[] = [
          { type: "entry", value: { id: ++id, conversationId: C, kind: "neighbour" } },
        ] as StorageWrite[];
        await storage.commit([writes], () => undefined);
        commits += 1;
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    } catch (error) {
      // A neighbour's commit failing (but for its host closing) would be a cross-session leak.
      if (!stopped && (error as Error).name !== "StorageClosed") throw error;
    }
  });
  return {
    async stop() {
      stopped = true;
      await Promise.all(loops);
      return { sessions, commits };
    },
  };
}
