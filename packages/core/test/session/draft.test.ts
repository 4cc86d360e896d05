/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return, @typescript-eslint/no-unsafe-argument --
   The tracker is exercised through untyped drafts on purpose: the property test walks random paths of random JSON. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  applyOps,
  DraftRevoked,
  DraftTracker,
  type DocValue,
  type Json,
  type JsonObject,
  type Op,
} from "../../src/index.js";
import { deepFreeze } from "../../src/session/freeze.js";

function track(base: DocValue, edit: (draft: any) => void): { value: DocValue; ops: Op[] } {
  const tracker = new DraftTracker(deepFreeze(structuredClone(base)), "doc");
  edit(tracker.draft);
  return tracker.finish();
}

describe("draft tracker > ops", () => {
  it("records a set, a delete and leaves the base untouched", () => {
    const base = deepFreeze({ a: 1, b: { c: 2 } });
    const tracker = new DraftTracker(base, "doc");
    const d = tracker.draft as any;
    d.a = 5;
    d.b.c = 3;
    delete d.a;
    const { value, ops } = tracker.finish();
    expect(ops).toEqual([
      ["s", ["a"], 5],
      ["s", ["b", "c"], 3],
      ["d", ["a"]],
    ]);
    expect(value).toEqual({ b: { c: 3 } });
    expect(base).toEqual({ a: 1, b: { c: 2 } });
    expect(Object.isFrozen(value)).toBe(true);
  });

  it("diffs strings: a when extended, t when a suffix, t+a when a tail window slid, else s", () => {
    const long = "0123456789abcdefghijklmnopqrstuvwxyz";
    expect(track({ s: "hello" }, (d) => (d.s = "hello world")).ops).toEqual([
      ["a", ["s"], " world"],
    ]);
    expect(track({ s: "hello world" }, (d) => (d.s = "world")).ops).toEqual([["t", ["s"], 6]]);
    expect(track({ s: long }, (d) => (d.s = long.slice(4) + "ABCD")).ops).toEqual([
      ["t", ["s"], 4],
      ["a", ["s"], "ABCD"],
    ]);
    expect(track({ s: "abc" }, (d) => (d.s = "xyz")).ops).toEqual([["s", ["s"], "xyz"]]);
    expect(track({ s: "same" }, (d) => (d.s = "same")).ops).toEqual([]);
  });

  it("merges consecutive appends to one string into one op", () => {
    const { ops, value } = track({ s: "" }, (d) => {
      for (const chunk of ["a", "b", "c"]) d.s += chunk;
    });
    expect(ops).toEqual([["a", ["s"], "abc"]]);
    expect(value).toEqual({ s: "abc" });
  });

  it("records push, pop, shift, unshift, splice and length changes as p", () => {
    const { ops, value } = track({ xs: [1, 2, 3] }, (d) => {
      d.xs.push(4);
      d.xs.pop();
      d.xs.shift();
      d.xs.unshift(0);
      d.xs.splice(1, 1, 9, 9);
      d.xs.length = 2;
      d.xs[2] = 7;
    });
    expect(ops).toEqual([
      ["p", ["xs"], 3, 0, [4]],
      ["p", ["xs"], 3, 1, []],
      ["p", ["xs"], 0, 1, []],
      ["p", ["xs"], 0, 0, [0]],
      ["p", ["xs"], 1, 1, [9, 9]],
      ["p", ["xs"], 2, 2, []],
      ["p", ["xs"], 2, 0, [7]],
    ]);
    expect(value).toEqual({ xs: [0, 9, 7] });
  });

  it("records sort and reverse as m permutations", () => {
    const { ops, value } = track({ xs: [3, 1, 2] }, (d) => {
      d.xs.sort((a: number, b: number) => a - b);
      d.xs.reverse();
    });
    expect(ops).toEqual([
      ["m", ["xs"], [1, 2, 0]],
      ["m", ["xs"], [2, 1, 0]],
    ]);
    expect(value).toEqual({ xs: [3, 2, 1] });
  });

  it("keeps a child's path right after the array it sits in is spliced", () => {
    const { ops, value } = track({ xs: [{ n: 1 }, { n: 2 }] }, (d) => {
      const second = d.xs[1];
      d.xs.unshift({ n: 0 });
      second.n = 20;
    });
    expect(ops).toEqual([
      ["p", ["xs"], 0, 0, [{ n: 0 }]],
      ["s", ["xs", 2, "n"], 20],
    ]);
    expect(value).toEqual({ xs: [{ n: 0 }, { n: 1 }, { n: 20 }] });
  });

  it("copies assigned values: mutating the source afterwards changes nothing", () => {
    const source = { list: [1] };
    const { value, ops } = track({}, (d) => {
      d.x = source;
      source.list.push(2);
      d.x.list.push(3);
    });
    expect(value).toEqual({ x: { list: [1, 3] } });
    expect(applyOps({}, ops)).toEqual(value);
  });

  it("rejects non-JSON at the assignment with the path, and records nothing for it", () => {
    const tracker = new DraftTracker(deepFreeze({ items: [1, 2, 3] }), "app.notes");
    const d = tracker.draft as any;
    expect(() => (d.items[1] = NaN)).toThrow(new TypeError("app.notes.items[1]: NaN is not JSON"));
    expect(() => d.items.push({ f: () => 1 })).toThrow(
      /app\.notes\.items\[3\]\.f: a function is not JSON/,
    );
    expect(() => (d.items[5] = 1)).toThrow(TypeError);
    expect(() => delete d.items[0]).toThrow(TypeError);
    expect(() => (d.when = new Date())).toThrow(
      /app\.notes\.when: an instance of Date is not JSON/,
    );
    expect(tracker.finish().ops).toEqual([]);
  });

  it("revokes every view when finished: reads and writes throw DraftRevoked", () => {
    const tracker = new DraftTracker(deepFreeze({ a: { b: 1 } }), "doc");
    const d = tracker.draft as any;
    const inner = d.a;
    tracker.finish();
    expect(() => d.a).toThrow(DraftRevoked);
    expect(() => (inner.b = 2)).toThrow(DraftRevoked);
    expect(() => Object.keys(d)).toThrow(DraftRevoked);
  });

  it("a replaced root revokes the old views and records one r op", () => {
    const tracker = new DraftTracker(deepFreeze({ a: 1 }), "doc");
    const old = tracker.draft as any;
    old.a = 2;
    const next = tracker.replace({ b: [1] }) as any;
    next.b.push(2);
    expect(() => (old.a = 3)).toThrow(DraftRevoked);
    expect(tracker.finish()).toEqual({
      value: { b: [1, 2] },
      ops: [
        ["r", { b: [1] }],
        ["p", ["b"], 1, 0, [2]],
      ],
    });
  });

  it("treats the key __proto__ as data", () => {
    const { value, ops } = track({}, (d) => {
      d["__proto__"] = { x: 1 };
    });
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.keys(value)).toEqual(["__proto__"]);
    expect(applyOps({}, ops)).toEqual(value);
  });
});

// ---- property: replaying the ops on the base gives exactly the final value ----

type Step =
  | { t: "set"; path: number[]; key: string; value: Json }
  | { t: "del"; path: number[]; key: string }
  | {
      t: "str";
      path: number[];
      key: string;
      mode: "append" | "trim" | "slide" | "other";
      text: string;
      n: number;
    }
  | { t: "push" | "unshift"; path: number[]; items: Json[] }
  | { t: "pop" | "shift" | "reverse" | "sort"; path: number[] }
  | { t: "splice"; path: number[]; start: number; count: number; items: Json[] }
  | { t: "length"; path: number[]; n: number }
  | { t: "index"; path: number[]; i: number; value: Json }
  | { t: "replace"; value: JsonObject };

const leaf = fc.oneof(
  fc.integer({ min: -5, max: 50 }),
  fc.string({ maxLength: 6 }),
  fc.boolean(),
  fc.constant(null),
);
const json: fc.Arbitrary<Json> = fc.letrec<{ v: Json }>((tie) => ({
  v: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    leaf,
    fc.array(tie("v"), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom("a", "b", "c", "s", "xs"), tie("v"), { maxKeys: 3 }),
  ),
})).v;
const path = fc.array(fc.nat(5), { maxLength: 3 });
const key = fc.constantFrom("a", "b", "c", "s", "xs");
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ t: fc.constant("set" as const), path, key, value: json }),
  fc.record({ t: fc.constant("del" as const), path, key }),
  fc.record({
    t: fc.constant("str" as const),
    path,
    key,
    mode: fc.constantFrom("append", "trim", "slide", "other"),
    text: fc.string({ maxLength: 20 }),
    n: fc.nat(30),
  }),
  fc.record({
    t: fc.constantFrom("push" as const, "unshift" as const),
    path,
    items: fc.array(json, { maxLength: 3 }),
  }),
  fc.record({
    t: fc.constantFrom("pop" as const, "shift" as const, "reverse" as const, "sort" as const),
    path,
  }),
  fc.record({
    t: fc.constant("splice" as const),
    path,
    start: fc.integer({ min: -3, max: 5 }),
    count: fc.nat(4),
    items: fc.array(json, { maxLength: 3 }),
  }),
  fc.record({ t: fc.constant("length" as const), path, n: fc.nat(4) }),
  fc.record({ t: fc.constant("index" as const), path, i: fc.nat(5), value: json }),
  fc.record({
    t: fc.constant("replace" as const),
    value: fc.dictionary(key, json, { maxKeys: 3 }),
  }),
);

/** Walks `path` as "pick the i-th container child" so steps land on existing nodes. */
function target(root: any, picks: number[]): any {
  let node = root;
  for (const p of picks) {
    const children = Object.keys(node).filter(
      (k) => typeof node[k] === "object" && node[k] !== null,
    );
    if (children.length === 0) break;
    node = node[children[p % children.length] as string];
  }
  return node;
}

function applyStep(tracker: DraftTracker, root: any, s: Step): any {
  if (s.t === "replace") return tracker.replace(s.value);
  const node = target(root, s.path);
  const isArray = Array.isArray(node);
  switch (s.t) {
    case "set":
      if (isArray) {
        if (node.length > 0) node[s.path.length % node.length] = s.value;
      } else node[s.key] = s.value;
      break;
    case "del":
      if (!isArray) delete node[s.key];
      break;
    case "str": {
      const k = isArray ? (node.length > 0 ? 0 : undefined) : s.key;
      if (k === undefined) break;
      const old = node[k];
      if (typeof old !== "string") {
        node[k] = s.text;
        break;
      }
      const n = Math.min(s.n, old.length);
      node[k] =
        s.mode === "append"
          ? old + s.text
          : s.mode === "trim"
            ? old.slice(n)
            : s.mode === "slide"
              ? old.slice(n) + s.text
              : s.text;
      break;
    }
    case "push":
    case "unshift":
      if (isArray) node[s.t](...s.items);
      break;
    case "pop":
    case "shift":
    case "reverse":
      if (isArray) node[s.t]();
      break;
    case "sort":
      if (isArray)
        node.sort((a: unknown, b: unknown) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
      break;
    case "splice":
      if (isArray) node.splice(s.start, s.count, ...s.items);
      break;
    case "length":
      if (isArray) node.length = Math.min(s.n, node.length);
      break;
    case "index":
      if (isArray && s.i <= node.length) node[s.i] = s.value;
      break;
  }
  return root;
}

/** Paths of containers in `value` that are not frozen (a final value is shared: frozen at every level). */
function unfrozenPaths(value: Json, path = "$"): string[] {
  if (typeof value !== "object" || value === null) return [];
  const own = Object.isFrozen(value) ? [] : [path];
  const children = Array.isArray(value)
    ? value.flatMap((item, i) => unfrozenPaths(item, `${path}[${i}]`))
    : Object.entries(value).flatMap(([k, item]) => unfrozenPaths(item, `${path}.${k}`));
  return [...own, ...children];
}

describe("draft tracker > property", () => {
  it("replaying a commit's ops on its base gives exactly the draft's final value, frozen at every level", () => {
    fc.assert(
      fc.property(
        fc.dictionary(key, json, { maxKeys: 4 }),
        fc.array(step, { maxLength: 25 }),
        (base, steps) => {
          const frozenBase = deepFreeze(structuredClone(base));
          const tracker = new DraftTracker(frozenBase, "doc");
          let root: any = tracker.draft;
          const mirror: any = structuredClone(base);
          let plain: any = mirror;
          for (const s of steps) {
            root = applyStep(tracker, root, s);
            plain =
              s.t === "replace"
                ? structuredClone(s.value)
                : applyStep(new DraftTracker({}, "x"), plain, s);
          }
          const { value, ops } = tracker.finish();
          expect(applyOps(frozenBase, ops)).toEqual(value);
          expect(value).toEqual(JSON.parse(JSON.stringify(plain)));
          expect(frozenBase).toEqual(base);
          expect(unfrozenPaths(value)).toEqual([]);
        },
      ),
      { numRuns: 600 },
    );
  });
});
