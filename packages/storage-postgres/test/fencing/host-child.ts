/**
 * A host in its own process, for the failover tests. It opens the sessions
 * named in HOST_SESSIONS (comma-separated) through one host, creates a
 * conversation in each and says "ready" (after "opened", once every lease
 * is taken). With HOST_STANDBY it first waits
 * for a "go" line (so a test can start the process ahead and time the
 * take-over alone), and with HOST_RETRY_OPEN it retries an open refused with
 * StorageLocked (a paused holder's lease has not expired yet).
 *
 * Then, with HOST_MODE=stream, every session commits in a loop and each
 * acknowledged commit is reported ({ack: [session index, n]}), a failed one
 * as {failed: [index, name, cause]} (that session stops); otherwise each
 * "commit" line on stdin commits once in every session and reports how each
 * went. Entries carry {n, g} with g = HOST_GENERATION.
 */
import { createInterface } from "node:readline";
import { Session, type ConversationId } from "@durably/core";
import { openPostgresHost, type PostgresStorage } from "../../src/index.js";

function report(message: object): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

const url = process.env.DURABLY_PG_URL;
const keys = process.env.HOST_SESSIONS?.split(",");
if (!url || !keys) throw new Error("host-child needs DURABLY_PG_URL and HOST_SESSIONS");
const generation = Number(process.env.HOST_GENERATION ?? 0);
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

const host = await openPostgresHost({
  connectionString: url,
  leaseMs: Number(process.env.HOST_LEASE_MS ?? 30_000),
  maxConnections: Number(process.env.HOST_MAX_CONNECTIONS ?? 4),
  owner: process.env.HOST_OWNER ?? "child-host",
});
if (process.env.HOST_STANDBY) {
  report({ standby: true });
  for (let line = await lines.next(); !line.done; line = await lines.next())
    if (line.value.trim() === "go") break;
}

async function openSession(key: string): Promise<PostgresStorage> {
  for (;;) {
    try {
      return await host.open(key);
    } catch (error) {
      if (!process.env.HOST_RETRY_OPEN || (error as Error).name !== "StorageLocked") throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

const storages = await Promise.all(keys.map(openSession));
// Every lease is taken: the take-over is done (what follows is this test's own setup).
report({ opened: true });
const sessions = await Promise.all(storages.map((storage) => Session.open(storage)));
const conversations = await Promise.all(
  sessions.map(async (durable) => {
    let id = 0 as ConversationId;
    await durable.commit(async (tx) => {
      const conversation = await tx.createConversation({ ownership: { kind: "ownerless" } });
      id = conversation.id;
      await tx.appendEntry(conversation.id, { kind: "child", data: { n: 0, g: generation } });
    });
    return id;
  }),
);
report({ ready: true });

function failure(error: unknown): { name: string; cause: string | null } {
  const e = error as Error & { cause?: Error };
  return { name: e.name, cause: e.cause?.name ?? null };
}

if (process.env.HOST_MODE === "stream") {
  await Promise.all(
    sessions.map(async (durable, i) => {
      for (let n = 1; ; n++) {
        try {
          await durable.commit((tx) =>
            tx.appendEntry(conversations[i] as ConversationId, {
              kind: "child",
              data: { n, g: generation },
            }),
          );
        } catch (error) {
          const { name, cause } = failure(error);
          return report({ failed: [i, name, cause] });
        }
        report({ ack: [i, n] });
      }
    }),
  );
}

let round = 0;
for (let line = await lines.next(); !line.done; line = await lines.next()) {
  if (line.value.trim() !== "commit") continue;
  round += 1;
  const n = round;
  const results = await Promise.all(
    sessions.map((durable, i) =>
      durable
        .commit((tx) =>
          tx.appendEntry(conversations[i] as ConversationId, {
            kind: "child",
            data: { n, g: generation },
          }),
        )
        .then(
          () => ({ result: "committed" }),
          (error: unknown) => ({ result: "failed", ...failure(error) }),
        ),
    ),
  );
  report({ round: n, results });
}
