/**
 * The shared conformance suites for sessions opened through one host while
 * neighbour sessions of the same host commit all the time: every call under
 * test shares transactions (group-commit rounds) with neighbours' calls.
 */
import {
  persistentStorageFactory,
  registerSessionConformance,
  registerStorageConformance,
  registerTaskConformance,
} from "@durably/contract-tests";
import { afterAll, describe, expect, it } from "vitest";
import { openPostgresHost, type PostgresHost } from "../src/index.js";
import { startNeighbours } from "./support/neighbours.js";
import { freshSession, PG_URL, SKIP_REASON, testPool } from "./support/server.js";

const api = { describe, it, expect };

let host: Promise<PostgresHost> | undefined;
let neighbours: ReturnType<typeof startNeighbours> | undefined;

function sharedHost(): Promise<PostgresHost> {
  host ??= openPostgresHost({ connectionString: PG_URL, maxConnections: 4 }).then((h) => {
    neighbours = startNeighbours(h, 8);
    return h;
  });
  return host;
}

const factory = persistentStorageFactory(() => {
  const session = freshSession("host-conformance");
  return { open: async () => (await sharedHost()).open(session) };
});

/** A host sending each round as one statement with bound parameters (the `commit_calls` function). */
let parameterizedHost: Promise<PostgresHost> | undefined;
const parameterizedFactory = persistentStorageFactory(() => {
  const session = freshSession("host-conformance-parameterized");
  return {
    open: async () => {
      parameterizedHost ??= openPostgresHost({
        connectionString: PG_URL,
        maxConnections: 4,
        parameterizedCommits: true,
      });
      return (await parameterizedHost).open(session);
    },
  };
});

if (PG_URL) {
  registerStorageConformance(api, "PostgresHost session", factory);
  registerSessionConformance(api, "PostgresHost session", factory);
  registerTaskConformance(api, "PostgresHost session", factory);
  registerStorageConformance(
    api,
    "PostgresHost session, parameterized commits",
    parameterizedFactory,
  );
  registerSessionConformance(
    api,
    "PostgresHost session, parameterized commits",
    parameterizedFactory,
  );
  registerTaskConformance(api, "PostgresHost session, parameterized commits", parameterizedFactory);

  describe("PostgresHost session > neighbours", () => {
    it("the neighbours committed throughout, each commit stored once, and shared rounds with the sessions under test", async () => {
      const h = await sharedHost();
      const stats = h.stats();
      const { sessions, commits } = await neighbours!.stop();
      const pool = testPool();
      try {
        const r = await pool.query<{ n: string }>(
          "SELECT count(*) AS n FROM durably.entries WHERE session_key = ANY($1)",
          [sessions],
        );
        expect(Number(r.rows[0]?.n)).toBe(commits);
      } finally {
        await pool.end();
      }
      expect(commits).toBeGreaterThan(100);
      // Rounds carried more than one call on average: the calls under test rode with neighbours'.
      expect(stats.calls).toBeGreaterThan(stats.rounds);
      console.log(
        `host conformance: neighbours stored ${commits} commits; ${stats.calls} calls in ${stats.rounds} rounds (${stats.replays} replayed)`,
      );
    });
  });

  afterAll(async () => {
    await neighbours?.stop();
    await (await host)?.close();
    await (await parameterizedHost)?.close();
  });
} else it.skip(`PostgresHost conformance: ${SKIP_REASON}`, () => undefined);
