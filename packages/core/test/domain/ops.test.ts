import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  applyOps,
  InvalidOp,
  validateOp,
  type Json,
  type JsonPath,
  type Op,
} from "../../src/index.js";

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

function invalid(value: Json, ops: unknown[], opIndex: number, message: string): void {
  let error: unknown;
  try {
    applyOps(value, ops as Op[]);
  } catch (caught) {
    error = caught;
  }
  expect(error, `ops ${JSON.stringify(ops)}`).toBeInstanceOf(InvalidOp);
  expect((error as InvalidOp).opIndex).toBe(opIndex);
  expect((error as InvalidOp).code).toBe("INVALID_OP");
  expect((error as InvalidOp).message).toBe(`op ${opIndex}: ${message}`);
}

const doc = (): Json => ({ title: "ab", items: [1, 2, 3], nested: { list: [{ t: "x" }] } });

describe("applyOps applies every op kind", () => {
  it("r replaces the whole value", () => {
    expect(applyOps(doc(), [["r", [1]]])).toEqual([1]);
  });
  it("s sets an object key (new or existing) or an existing array index", () => {
    expect(
      applyOps(doc(), [
        ["s", ["title"], "new"],
        ["s", ["extra"], { a: 1 }],
        ["s", ["items", 0], 9],
      ]),
    ).toEqual({
      title: "new",
      items: [9, 2, 3],
      nested: { list: [{ t: "x" }] },
      extra: { a: 1 },
    });
    expect(applyOps(doc(), [["s", ["nested", "list", 0, "t"], "y"]])).toEqual({
      ...(doc() as object),
      nested: { list: [{ t: "y" }] },
    });
  });
  it("d deletes an object key", () => {
    expect(
      applyOps(doc(), [
        ["d", ["title"]],
        ["d", ["nested", "list"]],
      ]),
    ).toEqual({ items: [1, 2, 3], nested: {} });
  });
  it("a appends text to a string, also at the root", () => {
    expect(applyOps(doc(), [["a", ["title"], "cd"]])).toMatchObject({ title: "abcd" });
    expect(applyOps("x", [["a", [], "y"]])).toBe("xy");
  });
  it("t trims UTF-16 units from the front of a string", () => {
    expect(applyOps(doc(), [["t", ["title"], 1]])).toMatchObject({ title: "b" });
    expect(applyOps("abc", [["t", [], 3]])).toBe("");
  });
  it("p splices an array: insert, remove, replace, append at the end", () => {
    expect(applyOps([1, 2, 3], [["p", [], 1, 1, ["a", "b"]]])).toEqual([1, "a", "b", 3]);
    expect(applyOps([1, 2, 3], [["p", [], 3, 0, [4]]])).toEqual([1, 2, 3, 4]);
    expect(applyOps([1, 2, 3], [["p", [], 0, 3, []]])).toEqual([]);
    expect(applyOps([[1]], [["p", [], 0, 0, [[0]]]])).toEqual([[0], [1]]);
  });
  it("p inserts very large item lists without overflowing the stack", () => {
    const items = Array.from({ length: 300_000 }, (_, i) => i);
    expect((applyOps([], [["p", [], 0, 0, items]]) as Json[]).length).toBe(300_000);
  });
  it("m reorders an array: next[i] = previous[permutation[i]]", () => {
    expect(applyOps(["a", "b", "c"], [["m", [], [2, 0, 1]]])).toEqual(["c", "a", "b"]);
  });
  it("applies ops in order, each on the result of the previous", () => {
    expect(
      applyOps({ l: [] }, [
        ["p", ["l"], 0, 0, ["x"]],
        ["a", ["l", 0], "y"],
        ["s", ["n"], 1],
        ["d", ["n"]],
      ]),
    ).toEqual({ l: ["xy"] });
  });
  it("returns the input itself for no ops", () => {
    const value = doc();
    expect(applyOps(value, [])).toBe(value);
  });
});

describe("applyOps throws InvalidOp with the op index and a clear message for every invalid op", () => {
  const cases: [string, Json, unknown[], number, string][] = [
    ["a non-tuple", {}, ["s"], 0, "an op must be a tuple starting with its kind"],
    [
      "a tuple without a string kind",
      {},
      [[1, 2]],
      0,
      "an op must be a tuple starting with its kind",
    ],
    ["an unknown kind", {}, [["x", []]], 0, 'unknown op kind "x"'],
    ["an inherited name as kind", {}, [["toString", []]], 0, 'unknown op kind "toString"'],
    ["__proto__ as kind", {}, [["__proto__", []]], 0, 'unknown op kind "__proto__"'],
    ["the wrong arity", {}, [["s", ["a"]]], 0, 'op "s" takes 2 arguments, got 1'],
    ["a path that is not an array", {}, [["s", "a", 1]], 0, 'op "s" has an invalid path'],
    ["a negative path index", [1], [["s", [-1], 1]], 0, 'op "s" has an invalid path'],
    ["an empty path for s", {}, [["s", [], 1]], 0, 'op "s" needs a non-empty path'],
    ["an empty path for d", {}, [["d", []]], 0, 'op "d" needs a non-empty path'],
    ["a non-string append", "x", [["a", [], 1]], 0, 'op "a" needs a string to append'],
    ["a fractional trim", "x", [["t", [], 0.5]], 0, 'op "t" needs a non-negative integer count'],
    [
      "a splice without items",
      [],
      [["p", [], 0, 0, 1]],
      0,
      'op "p" needs index, removeCount and an items array',
    ],
    ["a non-array permutation", [], [["m", [], 1]], 0, 'op "m" needs a permutation array'],
    [
      "a missing key on the way",
      { a: {} },
      [["s", ["a", "b", "c"], 1]],
      0,
      'value.a.b: no key "b"',
    ],
    [
      "an index past the end on the way",
      { a: [] },
      [["s", ["a", 0, "c"], 1]],
      0,
      "value.a[0]: no array element 0",
    ],
    [
      "setting a key inside a number",
      { a: 1 },
      [["s", ["a", "b"], 1]],
      0,
      'value.a: cannot set "b" here',
    ],
    [
      "descending into a number",
      { a: 1 },
      [["s", ["a", "b", "c"], 1]],
      0,
      "value.a.b: cannot descend into number",
    ],
    [
      "descending into null",
      { a: null },
      [["a", ["a", "b"], "x"]],
      0,
      "value.a.b: cannot descend into null",
    ],
    [
      "setting an index past the end",
      { l: [1] },
      [["s", ["l", 1], 2]],
      0,
      "value.l: no array element 1 to set",
    ],
    [
      "setting a string key in an array",
      { l: [1] },
      [["s", ["l", "x"], 2]],
      0,
      "value.l: no array element x to set",
    ],
    [
      "setting a number key in an object",
      { o: {} },
      [["s", ["o", 0], 2]],
      0,
      "value.o: cannot set 0 here",
    ],
    [
      "setting inside a string",
      { s: "x" },
      [["s", ["s", "k"], 2]],
      0,
      'value.s: cannot set "k" here',
    ],
    ["deleting a missing key", { a: 1 }, [["d", ["b"]]], 0, 'value: no key "b" to delete'],
    ["deleting from an array", { l: [1] }, [["d", ["l", 0]]], 0, "value.l: no key 0 to delete"],
    ["appending to a number", { n: 1 }, [["a", ["n"], "x"]], 0, "value.n: append needs a string"],
    ["trimming a number", { n: 1 }, [["t", ["n"], 1]], 0, "value.n: trim needs a string"],
    [
      "trimming past the end",
      { s: "ab" },
      [["t", ["s"], 3]],
      0,
      "value.s: cannot trim 3 units from a string of 2",
    ],
    [
      "splicing a non-array",
      { s: "ab" },
      [["p", ["s"], 0, 0, []]],
      0,
      "value.s: splice needs an array",
    ],
    [
      "splicing past the end",
      { l: [1] },
      [["p", ["l"], 2, 0, []]],
      0,
      "value.l: splice index 2 is past the end (1)",
    ],
    [
      "removing past the end",
      { l: [1] },
      [["p", ["l"], 0, 2, []]],
      0,
      "value.l: cannot remove 2 items at 0 from 1",
    ],
    ["reordering a non-array", { o: {} }, [["m", ["o"], []]], 0, "value.o: reorder needs an array"],
    [
      "a permutation of the wrong length",
      [1, 2],
      [["m", [], [0]]],
      0,
      "value: permutation of 1 for an array of 2",
    ],
    [
      "a permutation with a repeat",
      [1, 2],
      [["m", [], [0, 0]]],
      0,
      "value: [0,0] is not a permutation",
    ],
    [
      "a permutation out of range",
      [1, 2],
      [["m", [], [0, 2]]],
      0,
      "value: [0,2] is not a permutation",
    ],
    [
      "a bad op after good ones",
      { a: 1 },
      [
        ["s", ["a"], 2],
        ["d", ["a"]],
        ["d", ["a"]],
      ],
      2,
      'value: no key "a" to delete',
    ],
  ];
  for (const [what, value, ops, index, message] of cases)
    it(`rejects ${what}`, () => invalid(value, ops, index, message));

  it("validateOp checks shape only and names the op index it is given", () => {
    expect(() => validateOp(["s", ["missing"], 1], 4)).not.toThrow();
    expect(() => validateOp(["q"], 4)).toThrow("op 4: unknown op kind");
  });
});

describe("applyOps never touches its input", () => {
  it("works on a deep-frozen input and leaves it unchanged", () => {
    const input = deepFreeze(doc());
    const before = JSON.stringify(input);
    const ops: Op[] = [
      ["s", ["title"], "t"],
      ["d", ["title"]],
      ["a", ["nested", "list", 0, "t"], "y"],
      ["t", ["nested", "list", 0, "t"], 1],
      ["p", ["items"], 0, 1, [7]],
      ["m", ["items"], [2, 1, 0]],
      ["r", { replaced: true }],
    ];
    for (let n = 1; n <= ops.length; n++) applyOps(input, ops.slice(0, n));
    expect(JSON.stringify(input)).toBe(before);
  });

  it("shares untouched subtrees and rebuilds only the changed spine", () => {
    const input = { a: { deep: [1] }, b: { c: { d: 1 } } };
    const out = applyOps(input, [["s", ["b", "c", "d"], 2]]) as typeof input;
    expect(out.a).toBe(input.a);
    expect(out.b).not.toBe(input.b);
    expect(input.b.c.d).toBe(1);
  });

  it("leaves the input untouched when a later op fails", () => {
    const input = deepFreeze({ a: [1, 2] });
    expect(() =>
      applyOps(input, [
        ["p", ["a"], 0, 0, [0]],
        ["d", ["zz"]],
      ]),
    ).toThrow(InvalidOp);
    expect(input).toEqual({ a: [1, 2] });
  });

  // Generates a value and ops that are valid for it, one at a time, by
  // choosing among the paths that exist in the value the previous ops left.
  const jsonValue = fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>;

  function paths(value: Json, prefix: JsonPath = []): { path: JsonPath; value: Json }[] {
    const out = [{ path: prefix, value }];
    if (Array.isArray(value)) value.forEach((item, i) => out.push(...paths(item, [...prefix, i])));
    else if (typeof value === "object" && value !== null)
      for (const [key, item] of Object.entries(value)) out.push(...paths(item, [...prefix, key]));
    return out;
  }

  function validOp(value: Json, pick: number, arg: Json, n: number): Op | undefined {
    const all = paths(value);
    const target = all[pick % all.length]!;
    const { path } = target;
    const v = target.value;
    const candidates: Op[] = [["r", arg]];
    if (typeof v === "string") {
      candidates.push(["a", path, String(n)], ["t", path, n % (v.length + 1)]);
    }
    if (Array.isArray(v)) {
      const at = n % (v.length + 1);
      candidates.push(["p", path, at, (n >> 3) % (v.length - at + 1), [arg]]);
      candidates.push(["m", path, v.map((_, i) => (i + n) % v.length)]);
      if (v.length > 0) candidates.push(["s", [...path, n % v.length], arg]);
    }
    if (typeof v === "object" && v !== null && !Array.isArray(v)) {
      candidates.push(["s", [...path, `k${n % 4}`], arg]);
      const keys = Object.keys(v);
      if (keys.length > 0) candidates.push(["d", [...path, keys[n % keys.length]!]]);
    }
    return candidates[(n >> 5) % candidates.length];
  }

  it("random valid op sequences never mutate a (deep-frozen) input and match replaying one op at a time", () => {
    fc.assert(
      fc.property(
        jsonValue,
        fc.array(fc.tuple(fc.nat(), jsonValue, fc.nat(1 << 12)), { maxLength: 12 }),
        fc.boolean(),
        (start, steps, freeze) => {
          const input = freeze ? deepFreeze(structuredClone(start)) : structuredClone(start);
          const before = JSON.stringify(input);
          const ops: Op[] = [];
          let expected: Json = structuredClone(start);
          for (const [pick, arg, n] of steps) {
            const op = validOp(expected, pick, arg, n);
            if (op === undefined) continue;
            ops.push(op);
            expected = applyOps(structuredClone(expected), [op]);
          }
          const result = applyOps(input, ops);
          expect(JSON.stringify(input)).toBe(before);
          expect(result).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });
});
