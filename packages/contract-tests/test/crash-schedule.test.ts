import { describe, expect, it } from "vitest";
import { planKill } from "../src/crash/kill-loop.js";
import { crashIterations, crashSeed, Prng } from "../src/crash/prng.js";

describe("crash suite > kill schedule", () => {
  it("a seed replays the same kill plans", () => {
    const plans = (seed: number) => {
      const prng = new Prng(seed).fork("kill-loop/1");
      return Array.from({ length: 50 }, () => planKill(prng, 1, 800));
    };
    expect(plans(42)).toEqual(plans(42));
    expect(plans(42)).not.toEqual(plans(43));
  });

  it("plans every kind of kill moment, within their bounds", () => {
    const prng = new Prng(1);
    const plans = Array.from({ length: 2000 }, () => planKill(prng, 16, 800));
    const kinds = new Set(plans.map((plan) => plan.kind));
    expect([...kinds].sort()).toEqual(["after-acks", "after-ready", "while-opening"]);
    for (const plan of plans) {
      if (plan.kind === "while-opening")
        expect(plan.afterMs >= 400 && plan.afterMs <= 960).toBe(true);
      if (plan.kind === "after-acks")
        expect(plan.acks >= 1 && plan.acks <= 320 && plan.thenMs <= 3).toBe(true);
      if (plan.kind === "after-ready") expect(plan.afterMs >= 0 && plan.afterMs <= 60).toBe(true);
    }
  });

  it("CRASH_SEED and CRASH_ITERATIONS override the defaults and reject garbage", () => {
    expect(crashSeed(5, {})).toBe(5);
    expect(crashSeed(5, { CRASH_SEED: "123" })).toBe(123);
    expect(() => crashSeed(undefined, { CRASH_SEED: "abc" })).toThrow(RangeError);
    expect(crashIterations(8, {})).toBe(8);
    expect(crashIterations(8, { CRASH_ITERATIONS: "1000" })).toBe(1000);
    expect(() => crashIterations(8, { CRASH_ITERATIONS: "0" })).toThrow(/CRASH_ITERATIONS/);
  });
});
