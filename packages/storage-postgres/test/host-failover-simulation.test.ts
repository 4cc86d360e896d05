/**
 * A seeded failover simulation: 4 host processes, each holding 100 of 400
 * sessions and committing in all of them, while a seeded schedule SIGKILLs
 * or SIGSTOPs one host at a time. A successor host process (started ahead,
 * so only the take-over is timed) takes the victim's sessions over: at once
 * after a SIGKILL, after the leases expire after a SIGSTOP (the stopped host
 * is then resumed and must be fenced in every session). At the end every
 * host is SIGKILLed mid-stream, and the database must hold every
 * acknowledged commit exactly once, with no older host writing a session
 * after a newer one did.
 *
 * Bounded by default (4 events); DURABLY_PG_SOAK=<seconds> runs events for
 * that long; DURABLY_PG_SEED=<n> replays a schedule.
 */
import { Prng } from "@durably/contract-tests";
import { describe, expect, it } from "vitest";
import { startHostChild } from "./support/host-child.js";
import { freshSession, PG_URL, SKIP_REASON, testPool } from "./support/server.js";

const HOSTS = 4;
const PER_HOST = 100;
const LEASE_MS = 5000;
const SOAK_S = Number(process.env.DURABLY_PG_SOAK ?? 0);
const SEED = Number(process.env.DURABLY_PG_SEED ?? Math.floor(Math.random() * 2 ** 32));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Host = ReturnType<typeof startHostChild> & { generation: number };

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length - 1) * p))] ?? NaN;
}

describe.skipIf(!PG_URL)("PostgresHost > failover simulation", () => {
  it(
    `4 hosts x 100 sessions, seeded SIGKILL/SIGSTOP of hosts (seed ${SEED}): every acknowledged commit once, fenced hosts never write again`,
    async () => {
      const prng = new Prng(SEED);
      const rand = () => prng.next();
      const groups = Array.from({ length: HOSTS }, () =>
        Array.from({ length: PER_HOST }, () => freshSession("sim")),
      );
      let generations = 0;
      const start = (group: number, extra: Record<string, string> = {}): Host => ({
        ...startHostChild({
          HOST_SESSIONS: groups[group]!.join(","),
          HOST_LEASE_MS: String(LEASE_MS),
          HOST_MAX_CONNECTIONS: "3",
          HOST_MODE: "stream",
          HOST_GENERATION: String(++generations),
          HOST_OWNER: `sim-host-${generations}`,
          ...extra,
        }),
        generation: generations,
      });
      const current = groups.map((_, g) => start(g));
      const everyHost: { host: Host; group: number }[] = current.map((host, group) => ({
        host,
        group,
      }));
      const latencies = { kill: [] as number[], stop: [] as number[] };
      try {
        for (const h of current) {
          expect(await h.next()).toMatchObject({ opened: true });
          expect(await h.next()).toMatchObject({ ready: true });
        }
        const until = performance.now() + SOAK_S * 1000;
        for (let event = 0; event < 4 || performance.now() < until; event++) {
          await sleep(200 + rand() * 500);
          const group = Math.floor(rand() * HOSTS);
          const kind = rand() < 0.5 ? "kill" : "stop";
          const victim = current[group]!;
          const successor = start(group, { HOST_STANDBY: "1", HOST_RETRY_OPEN: "1" });
          everyHost.push({ host: successor, group });
          expect(await successor.next()).toMatchObject({ standby: true });
          const t0 = performance.now();
          victim.child.kill(kind === "kill" ? "SIGKILL" : "SIGSTOP");
          successor.child.stdin!.write("go\n");
          expect(await successor.next()).toMatchObject({ opened: true });
          const latency = performance.now() - t0;
          expect(await successor.next()).toMatchObject({ ready: true });
          latencies[kind].push(latency);
          current[group] = successor;
          if (kind === "kill") {
            // No lease wait: the dead host's liveness lock dropped with its connection.
            expect(latency).toBeLessThan(LEASE_MS);
            continue;
          }
          // A paused host is waited out: its leases were live when it stopped.
          expect(latency).toBeGreaterThan(LEASE_MS / 3);
          victim.child.kill("SIGCONT");
          const deadline = performance.now() + 20_000;
          while (victim.failed.length < PER_HOST && performance.now() < deadline) await sleep(50);
          // Resumed, it is fenced in every session (its renewal finds the tokens replaced, or the fence refuses its commit).
          expect(victim.failed.length).toBe(PER_HOST);
          for (const f of victim.failed) expect((f.failed as unknown[])[2]).toBe("StorageLocked");
          victim.child.kill("SIGKILL");
        }
        await sleep(300);
      } finally {
        for (const { host } of everyHost) host.child.kill("SIGKILL");
      }
      await Promise.all(
        everyHost.map(
          ({ host }) =>
            new Promise((resolve) =>
              host.child.exitCode !== null || host.child.signalCode !== null
                ? resolve(undefined)
                : host.child.once("exit", resolve),
            ),
        ),
      );

      const pool = testPool();
      let acknowledged = 0;
      let stored = 0;
      try {
        for (let group = 0; group < HOSTS; group++) {
          const sessions = groups[group]!;
          const r = await pool.query<{ session_key: string; g: string; n: string }>(
            `SELECT session_key, record::json->'data'->>'g' AS g, record::json->'data'->>'n' AS n
             FROM durably.entries WHERE session_key = ANY($1) AND record::json->>'kind' = 'child'
            ORDER BY session_key, commit_seq`,
            [sessions],
          );
          stored += r.rows.length;
          const counts = new Map<string, number>();
          const lastGeneration = new Map<string, number>();
          for (const row of r.rows) {
            const key = `${sessions.indexOf(row.session_key)}/${row.g}/${row.n}`;
            counts.set(key, (counts.get(key) ?? 0) + 1);
            // Commits of one session in seq order: once a newer host wrote it, an older one never does.
            const g = Number(row.g);
            expect(g, row.session_key).toBeGreaterThanOrEqual(
              lastGeneration.get(row.session_key) ?? 0,
            );
            lastGeneration.set(row.session_key, g);
          }
          for (const [key, count] of counts) expect(count, key).toBe(1);
          for (const { host } of everyHost.filter((h) => h.group === group))
            for (const ack of host.acks) {
              const [index, n] = ack.split("/");
              acknowledged += 1;
              expect(
                counts.get(`${index}/${host.generation}/${n}`),
                `${ack} of generation ${host.generation}`,
              ).toBe(1);
            }
        }
      } finally {
        await pool.end();
      }
      const summary = (xs: number[]) =>
        xs.length === 0
          ? "none"
          : `${xs.length} events, median ${Math.round(percentile(xs, 0.5))} ms, max ${Math.round(Math.max(...xs))} ms`;
      console.log(
        `failover simulation seed ${SEED}: ${HOSTS} hosts x ${PER_HOST} sessions, lease ${LEASE_MS} ms; take-over latency of all ${PER_HOST} sessions after SIGKILL: ${summary(latencies.kill)}; after SIGSTOP: ${summary(latencies.stop)}; ${acknowledged} acknowledged commits all found once (${stored} stored)`,
      );
      expect(acknowledged).toBeGreaterThan(0);
    },
    300_000 + SOAK_S * 2000,
  );
});

if (!PG_URL) it.skip(`PostgresHost failover simulation: ${SKIP_REASON}`, () => undefined);
