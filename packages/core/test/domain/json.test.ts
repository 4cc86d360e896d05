import { describe, expect, it } from "vitest";
import {
  canonicalJson,
  checkJson,
  cloneJson,
  copyJson,
  formatPath,
  jsonEqual,
  MAX_JSON_DEPTH,
  STORAGE_WRITE_LEVELS,
  type Json,
} from "../../src/index.js";

function sparse(): unknown[] {
  const items: unknown[] = [1, 2, 3];
  items[5] = 6;
  return items;
}

class Point {
  constructor(
    readonly x: number,
    readonly y: number,
  ) {}
}

function withAccessor(): object {
  const value = { ok: 1 };
  Object.defineProperty(value, "late", { get: () => 2, enumerable: true });
  return value;
}

function arrayWithAccessor(): unknown[] {
  const items: unknown[] = [1, 2];
  Object.defineProperty(items, 1, { get: () => 2, enumerable: true });
  return items;
}

function cyclic(): object {
  const node: Record<string, unknown> = { name: "a" };
  node.self = { back: node };
  return node;
}

/** [what, value under entry.data.items[3], message fragment, full path] */
const violations: [string, () => unknown, string, string][] = [
  ["undefined in an array", () => [undefined], "undefined", "entry.data.items[3][0]"],
  ["NaN", () => Number.NaN, "NaN", "entry.data.items[3]"],
  ["Infinity", () => Number.POSITIVE_INFINITY, "Infinity", "entry.data.items[3]"],
  ["-Infinity", () => Number.NEGATIVE_INFINITY, "-Infinity", "entry.data.items[3]"],
  ["a bigint", () => 10n, "a bigint", "entry.data.items[3]"],
  ["a function", () => () => 1, "a function", "entry.data.items[3]"],
  ["a symbol", () => Symbol("s"), "a symbol", "entry.data.items[3]"],
  ["a cycle", cyclic, "a cycle", "entry.data.items[3].self.back"],
  ["a class instance", () => new Point(1, 2), "an instance of Point", "entry.data.items[3]"],
  ["a Date", () => new Date(0), "an instance of Date", "entry.data.items[3]"],
  ["a Map", () => new Map(), "an instance of Map", "entry.data.items[3]"],
  ["a boxed number", () => new Number(1), "an instance of Number", "entry.data.items[3]"],
  ["a sparse array", sparse, "a hole in a sparse array", "entry.data.items[3][3]"],
  ["an accessor property", withAccessor, "an accessor", "entry.data.items[3].late"],
  ["an accessor array element", arrayWithAccessor, "an accessor", "entry.data.items[3][1]"],
  [
    "a symbol key",
    () => ({ [Symbol("k")]: 1 }),
    "an object with symbol keys",
    "entry.data.items[3]",
  ],
  [
    "an Array subclass",
    () => new (class Items extends Array {})(),
    "an instance of Items",
    "entry.data.items[3]",
  ],
];

describe("copyJson and checkJson reject every strict-JSON violation with a TypeError naming the path", () => {
  for (const [what, make, fragment, path] of violations) {
    it(`rejects ${what}`, () => {
      const value = { items: [0, 1, 2, make()] };
      for (const run of [
        () => copyJson(value, "entry.data"),
        () => checkJson(value, "entry.data"),
      ]) {
        expect(run).toThrow(TypeError);
        expect(run).toThrow(`${path}: ${fragment} is not JSON`);
      }
    });
  }

  it("rejects undefined, a function or NaN at the root, naming the root", () => {
    expect(() => copyJson(undefined)).toThrow("value: undefined is not JSON");
    expect(() => copyJson(() => 1, "input")).toThrow("input: a function is not JSON");
    expect(() => checkJson(Number.NaN, "x")).toThrow("x: NaN is not JSON");
  });

  it("names keys that are not identifiers with brackets", () => {
    expect(() => copyJson({ "a b": [{ "c-d": Number.NaN }] }, "doc")).toThrow(
      'doc["a b"][0]["c-d"]: NaN is not JSON',
    );
  });
});

describe("copyJson copies strict JSON", () => {
  it("returns a deep copy equal to the input, sharing nothing", () => {
    const input = { a: [1, "two", true, null, { b: { c: [] } }], d: -0.5, e: "" };
    const copy = copyJson(input) as typeof input;
    expect(copy).toEqual(input);
    expect(copy).not.toBe(input);
    expect(copy.a).not.toBe(input.a);
    expect(copy.a[4]).not.toBe(input.a[4]);
  });

  it("omits object properties whose value is undefined, as JSON.stringify does", () => {
    const copy = copyJson({ a: 1, b: undefined, c: { d: undefined } });
    expect(copy).toEqual({ a: 1, c: {} });
    expect(Object.keys(copy as object)).toEqual(["a", "c"]);
    expect(() => checkJson({ a: undefined })).not.toThrow();
  });

  it("accepts objects with a null prototype and copies them to plain objects", () => {
    const bare = Object.assign(Object.create(null) as object, { a: 1 });
    const copy = copyJson({ bare });
    expect(copy).toEqual({ bare: { a: 1 } });
    expect(Object.getPrototypeOf((copy as { bare: object }).bare)).toBe(Object.prototype);
  });

  it("accepts a shared (non-cyclic) reference twice and copies it twice", () => {
    const shared = { n: 1 };
    const copy = copyJson({ a: shared, b: shared }) as { a: object; b: object };
    expect(copy).toEqual({ a: { n: 1 }, b: { n: 1 } });
    expect(copy.a).not.toBe(copy.b);
  });

  it("keeps a __proto__ key as an own property instead of setting the prototype", () => {
    const input = JSON.parse('{"__proto__": {"polluted": true}, "ok": 1}') as unknown;
    const copy = copyJson(input) as Record<string, unknown>;
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.keys(copy)).toEqual(["__proto__", "ok"]);
    expect(JSON.stringify(copy)).toBe('{"__proto__":{"polluted":true},"ok":1}');
    const cloned = cloneJson(copy as Json) as Record<string, unknown>;
    expect(Object.getPrototypeOf(cloned)).toBe(Object.prototype);
    expect(JSON.stringify(cloned)).toBe(JSON.stringify(copy));
  });

  it("cloneJson deep-copies a JSON value", () => {
    const value: Json = { a: [{ b: 1 }] };
    const clone = cloneJson(value);
    expect(clone).toEqual(value);
    (clone as { a: { b: number }[] }).a[0]!.b = 2;
    expect(value).toEqual({ a: [{ b: 1 }] });
  });
});

/** `levels` arrays around 0, built without recursion. */
function nested(levels: number): Json {
  let value: Json = 0;
  for (let i = 0; i < levels; i++) value = [value];
  return value;
}

describe("copyJson and checkJson limit nesting depth", () => {
  it("accept 256 levels counted from the value and refuse 257, naming the first level too deep", () => {
    expect(MAX_JSON_DEPTH).toBe(256);
    expect(copyJson(nested(256), "v", { depth: 0 })).toEqual(nested(256));
    for (const run of [
      () => copyJson(nested(257), "v", { depth: 0 }),
      () => checkJson(nested(257), "v", { depth: 0 }),
    ])
      expect(run).toThrow(new TypeError(`v${"[0]".repeat(256)}: nesting deeper than 256 levels`));
  });

  it("count the levels around the value: a document path, or a wrapper that is not a value", () => {
    expect(() => copyJson(nested(56), "doc.at", { depth: 200 })).not.toThrow();
    expect(() => copyJson(nested(57), "doc.at", { depth: 200 })).toThrow(
      `doc.at${"[0]".repeat(56)}: nesting deeper than 256 levels`,
    );
    expect(() => copyJson({ data: nested(256) }, "entry", { depth: -1 })).not.toThrow();
    expect(() => copyJson({ data: nested(257) }, "entry", { depth: -1 })).toThrow(
      `entry.data${"[0]".repeat(256)}: nesting deeper than 256 levels`,
    );
  });

  it("without a depth allow the bound of a whole storage write, so adapters copying writes accept every accepted value", () => {
    const bound = MAX_JSON_DEPTH + STORAGE_WRITE_LEVELS;
    expect(() => copyJson(nested(bound))).not.toThrow();
    expect(() => copyJson(nested(bound + 1), "write")).toThrow(
      `write${"[0]".repeat(bound)}: nesting deeper than ${bound} levels`,
    );
  });

  it("stop before recursing, so a value nested 100,000 levels gives the TypeError, not a stack overflow", () => {
    const deep = nested(100_000);
    expect(() => copyJson(deep)).toThrow(TypeError);
    expect(() => checkJson(deep, "v", { depth: 0 })).toThrow(TypeError);
    const objects: Record<string, unknown> = {};
    let node = objects;
    for (let i = 0; i < 100_000; i++) node = node.a = {};
    expect(() => copyJson(objects, "v", { depth: 0 })).toThrow(
      `v${".a".repeat(256)}: nesting deeper than 256 levels`,
    );
  });

  it("report a cycle as a cycle, not as nesting", () => {
    const node: Record<string, unknown> = {};
    node.self = node;
    expect(() => copyJson(node, "v", { depth: 0 })).toThrow("v.self: a cycle is not JSON");
  });
});

describe("copyJson normalises negative zero", () => {
  it("copies -0 as 0 at the root, in arrays and in objects", () => {
    expect(Object.is(copyJson(-0), 0)).toBe(true);
    const copy = copyJson({ a: -0, b: [-0, 1] }) as { a: number; b: number[] };
    expect(Object.is(copy.a, 0)).toBe(true);
    expect(Object.is(copy.b[0], 0)).toBe(true);
    expect(JSON.stringify(copy)).toBe('{"a":0,"b":[0,1]}');
  });
});

describe("formatPath", () => {
  it("renders identifiers with dots, indexes and other keys with brackets", () => {
    expect(formatPath("root", ["items", 3, "a b", "$ok_1", "1x", ""])).toBe(
      'root.items[3]["a b"].$ok_1["1x"][""]',
    );
  });
  it("renders an empty path as the root, and an empty root without a leading dot", () => {
    expect(formatPath("value", [])).toBe("value");
    expect(formatPath("", ["a", 0, "b"])).toBe("a[0].b");
    expect(formatPath("", [0])).toBe("[0]");
  });
});

describe("jsonEqual", () => {
  it("compares structurally, ignoring key order", () => {
    expect(jsonEqual({ a: [1, { b: null }], c: "x" }, { c: "x", a: [1, { b: null }] })).toBe(true);
  });
  it("tells apart values that differ anywhere", () => {
    const pairs: [Json, Json][] = [
      [1, "1"],
      [null, {}],
      [[], {}],
      [{}, []],
      [[1, 2], [1]],
      [{ a: 1 }, { a: 1, b: 2 }],
      [
        { a: 1, b: 2 },
        { a: 1, c: 2 },
      ],
      [{ a: [1] }, { a: [2] }],
      [true, false],
    ];
    for (const [a, b] of pairs) {
      expect(jsonEqual(a, b), `${JSON.stringify(a)} vs ${JSON.stringify(b)}`).toBe(false);
      expect(jsonEqual(b, a), `${JSON.stringify(b)} vs ${JSON.stringify(a)}`).toBe(false);
    }
  });
});

describe("canonicalJson", () => {
  it("sorts object keys at every depth, so equal values give equal text", () => {
    const a = canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: null } });
    const b = canonicalJson({ a: { c: null, d: [1, { y: 2, z: 1 }] }, b: 1 });
    expect(a).toBe('{"a":{"c":null,"d":[1,{"y":2,"z":1}]},"b":1}');
    expect(b).toBe(a);
  });
  it("keeps array order and escapes strings like JSON.stringify", () => {
    expect(canonicalJson([2, 1, 'q"'])).toBe('[2,1,"q\\""]');
    expect(canonicalJson("x")).toBe('"x"');
    expect(canonicalJson(null)).toBe("null");
  });
});
