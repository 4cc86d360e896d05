/**
 * A host in its own process, for the failover tests. It opens the sessions
 * named in HOST_SESSIONS (comma-separated) through one host, creates a
 * conversation in each and says "ready". Then, with HOST_MODE=stream, every
 * session commits in a loop and each acknowledged commit is reported
 * ({ack: [session index, n]}); otherwise each "commit" line on stdin commits
 * once in every session and reports how each went.
 */
import { createInterface } from "node:readline";
import { Session, type ConversationId } from "@durably/core";
import { openPostgresHost } from "../../src/index.js";

function report(message: object): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

const url = process.env.DURABLY_PG_URL;
const keys = process.env.HOST_SESSIONS?.split(",");
if (!url || !keys) throw new Error("host-child needs DURABLY_PG_URL and HOST_SESSIONS");
const host = await openPostgresHost({
  connectionString: url,
  leaseMs: Number(process.env.HOST_LEASE_MS ?? 30_000),
  maxConnections: Number(process.env.HOST_MAX_CONNECTIONS ?? 4),
  owner: process.env.HOST_OWNER ?? "child-host",
});
const sessions = await Promise.all(keys.map(async (key) => Session.open(await host.open(key))));
const conversations = await Promise.all(
  sessions.map(async (durable) => {
    let id = 0 as ConversationId;
    await durable.commit(async (tx) => {
      const conversation = await tx.createConversation({ ownership: { kind: "ownerless" } });
      id = conversation.id;
      await tx.appendEntry(conversation.id, { kind: "child", data: { n: 0 } });
    });
    return id;
  }),
);
report({ ready: true });

if (process.env.HOST_MODE === "stream") {
  await Promise.all(
    sessions.map(async (durable, i) => {
      for (let n = 1; ; n++) {
        await durable.commit((tx) =>
          tx.appendEntry(conversations[i] as ConversationId, { kind: "child", data: { n } }),
        );
        report({ ack: [i, n] });
      }
    }),
  );
}

let round = 0;
for await (const line of createInterface({ input: process.stdin })) {
  if (line.trim() !== "commit") continue;
  round += 1;
  const n = round;
  const results = await Promise.all(
    sessions.map((durable, i) =>
      durable
        .commit((tx) =>
          tx.appendEntry(conversations[i] as ConversationId, { kind: "child", data: { n } }),
        )
        .then(
          () => ({ result: "committed" }),
          (error: unknown) => {
            const e = error as Error & { cause?: Error };
            return { result: "failed", name: e.name, cause: e.cause?.name ?? null };
          },
        ),
    ),
  );
  report({ round: n, results });
}
