import { describe, expect, it } from "vitest";
import { configFrom } from "../src/config.ts";
import { evaluateGoals, kernelMicros, pairCases } from "../src/goals.ts";
import { messageOf } from "../src/peer-langgraph.ts";
import { median } from "../src/stats.ts";
import { textTable, times } from "../src/table.ts";

describe("config", () => {
  it("is the full run by default, writing to <repo>/bench-results", () => {
    const c = configFrom([], {});
    expect(c.smoke).toBe(false);
    expect(c.reopenSizes).toEqual([1_000, 10_000, 100_000]);
    expect(c.growingSteps).toBe(2000);
    expect(c.writers).toBe(64);
    expect(c.outDir.endsWith("/bench-results")).toBe(true);
  });
  it("takes --smoke or BENCH_SMOKE=1, and --out", () => {
    expect(configFrom(["--smoke"], {}).smoke).toBe(true);
    expect(configFrom([], { BENCH_SMOKE: "1" }).smoke).toBe(true);
    expect(configFrom([], { BENCH_SMOKE: "0" }).smoke).toBe(false);
    expect(configFrom(["--out", "/tmp/x"], {}).outDir).toBe("/tmp/x");
    expect(() => configFrom(["--out"], {})).toThrow(/--out needs a directory/);
  });
});

describe("figures", () => {
  it("median takes the middle value whatever the order", () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(3);
    expect(() => median([])).toThrow(RangeError);
  });
  it("formats ratios and aligns tables", () => {
    expect(times(0.5)).toBe("0.50x");
    expect(times(1 / 250)).toBe("1/250");
    expect(times(640)).toBe("640x");
    expect(
      textTable(
        ["a", "n"],
        [
          ["long name", "1"],
          ["b", "100"],
        ],
      ).split("\n"),
    ).toEqual(["a            n", "---------  ---", "long name    1", "b          100"]);
  });
  it("a growing-conversation message is exactly the requested size", () => {
    for (const step of [1, 2, 999, 2000])
      expect(JSON.stringify(messageOf(step, 300))).toHaveLength(300);
  });
  it("judges each goal by its comparator", () => {
    const cases = ["session", "raw", "peer"].flatMap((family) =>
      [
        "session/sqlite/1",
        "raw/sqlite/1",
        "session/sqlite/4",
        "peer/langgraph/4",
        "session/jsonl-fsync/4",
        "session/jsonl-fsync/1",
        "session/store-level/1",
        "raw/store-level/1",
        "session/store-level/4",
        "raw/store-level/4",
        "session/jsonl/1",
        "raw/jsonl/1",
        "session/memory/1",
        "raw/memory/1",
        "peer/langgraph/1",
        "raw/sqlite/4",
        "session/sqlite-full/1",
        "raw/sqlite-full/1",
        "session/sqlite-full/4",
        "raw/sqlite-full/4",
        "session/jsonl/4",
        "raw/jsonl/4",
      ]
        .filter((id) => id.startsWith(family))
        .map((id) => ({
          id,
          family: family as "session",
          label: id,
          backend: id.split("/")[1] as string,
          writers: Number(id.split("/")[2]),
          perSecond: id === "session/memory/1" ? 50 : 100,
          rounds: [100],
          commits: 1,
          cpuMicros: id === "session/memory/1" ? 12 : 4,
        })),
    );
    const side = {
      lastQuarterStepsPerSecond: 1,
      quarterStepsPerSecond: [1, 1, 1, 1],
      bytesOnDisk: 1,
      bytesAfterClose: 1,
    };
    const goals = evaluateGoals(
      cases,
      {
        steps: 8,
        messageBytes: 300,
        durably: side,
        langgraph: side,
        speedup: 60,
        bytesRatio: 0.01,
      },
      { rows: [], growth: { jsonl: 1, sqlite: 1 } },
      4,
    );
    const met = Object.fromEntries(goals.map((g) => [g.id, g.met]));
    expect(met["sqlite-1-vs-raw"]).toBe(true); // 1.0 >= 0.5
    expect(met["sqlite-4-vs-1"]).toBe(false); // 1.0 < 3
    expect(met["growing-speed"]).toBe(true); // 60 >= 50
    expect(met["growing-bytes"]).toBe(false); // 0.01 > 1/200
    expect(met["jsonl-reopen-linear"]).toBe(true);
    expect(met["kernel-memory-1-vs-raw"]).toBe(false); // 0.5 < 0.6
    expect(met["kernel-sqlite-4-vs-raw"]).toBe(true); // 1.0 >= 0.75
    expect(met["kernel-sqlite-full-1-vs-raw"]).toBe(true); // 1.0 >= 0.75
    expect(met["kernel-sqlite-1-vs-langgraph"]).toBe(true); // 1.0 >= 1.0
    expect(met["kernel-sqlite-4-vs-langgraph"]).toBe(false); // 1.0 < 1.3
    const cpu = goals.find((g) => g.id === "kernel-memory-cpu");
    expect(cpu).toMatchObject({ unit: "µs", value: 8, met: false }); // 12 - 4 > 5
  });

  it("reads the kernel's CPU per commit as the Session case's minus storage.commit direct's", () => {
    const at = (id: string, cpuMicros: number, backend = "sqlite", writers = 1) => ({
      id,
      family: id.split("/")[0] as "session",
      label: id,
      backend,
      writers,
      perSecond: 1,
      rounds: [1],
      commits: 1,
      cpuMicros,
    });
    const cases = [
      at("session/sqlite/1", 30),
      at("direct/sqlite/1", 22),
      at("raw/sqlite/1", 15),
      at("session/memory/1", 9, "memory"),
      at("raw/memory/1", 5, "memory"),
    ];
    expect(kernelMicros(cases, "session/sqlite/1")).toBe(8);
    expect(kernelMicros(cases, "session/memory/1")).toBe(4); // no direct case: the raw MemoryStorage.commit
    const pairs = pairCases(cases);
    expect(pairs.find((p) => p.caseId === "session/sqlite/1")).toMatchObject({
      baselineId: "raw/sqlite/1",
      cpuMicros: 30,
      baselineCpuMicros: 15,
      kernelMicros: 8,
    });
  });
});

describe("memory cases start each round afresh", () => {
  it("a fresh start keeps counting the closed sessions' calls and batches, and the next round commits", async () => {
    const { backend } = await import("../src/backends.ts");
    const { sessionCase } = await import("../src/commits.ts");
    const { rawMemory } = await import("../src/baselines.ts");
    const { localRounds } = await import("../src/harness.ts");
    const { Scratch } = await import("../src/paths.ts");
    const scratch = new Scratch();
    try {
      const runner = await sessionCase(backend("memory"), 4, scratch).open();
      expect("beforeRound" in runner).toBe(true);
      const rounds = localRounds(runner);
      const first = await rounds.round(20);
      const before = await rounds.stats();
      const second = await rounds.round(20, 5);
      const after = await rounds.stats();
      expect(first.commits).toBeGreaterThan(0);
      expect(second.commits).toBeGreaterThan(0);
      // The second round ran on a new session; the totals still include the first one's.
      expect(after?.batches ?? 0).toBeGreaterThanOrEqual((before?.batches ?? 0) + second.commits);
      await rounds.close();
      const raw = localRounds(await rawMemory(4).open());
      expect((await raw.round(20)).commits).toBeGreaterThan(0);
      expect((await raw.round(20, 5)).commits).toBeGreaterThan(0);
      await raw.close();
      // A backend on disk keeps its storage through the run.
      const sqlite = await sessionCase(backend("sqlite"), 1, scratch).open();
      expect("beforeRound" in sqlite).toBe(false);
      await sqlite.close();
    } finally {
      scratch.dispose();
    }
  });
});
