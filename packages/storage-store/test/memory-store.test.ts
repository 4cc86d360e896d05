import { describe, expect, it } from "vitest";
import { StorageClosed } from "@durably/core";
import { MemoryStore, type KeyValueStore } from "../src/index.js";

async function all(store: KeyValueStore, options: Parameters<KeyValueStore["range"]>[0]) {
  const out: string[] = [];
  for await (const [key] of store.range(options)) out.push(key);
  return out;
}

describe("MemoryStore > ordered key-value store", () => {
  it("keeps keys sorted whatever the insertion order, and reads ranges with gte/lt/reverse/limit", async () => {
    const store = new MemoryStore();
    const keys = ["b", "a/2", "c", "a/10", "a/1", "a", "ab"];
    await store.write(keys.map((key) => ({ type: "put", key, value: key.toUpperCase() })));
    expect(await all(store, {})).toEqual([...keys].sort());
    expect(await all(store, { gte: "a/", lt: "a0" })).toEqual(["a/1", "a/10", "a/2"]);
    expect(await all(store, { gte: "a/", lt: "a0", reverse: true, limit: 2 })).toEqual([
      "a/2",
      "a/10",
    ]);
    expect(await all(store, { gte: "ab", limit: 1 })).toEqual(["ab"]);
    expect(await all(store, { lt: "a" })).toEqual([]);
    expect(await store.get("a/10")).toBe("A/10");
    expect(await store.get("zz")).toBeUndefined();
  });

  it("overwrites and deletes within one write, in order", async () => {
    const store = new MemoryStore();
    await store.write([
      { type: "put", key: "k", value: "1" },
      { type: "put", key: "k", value: "2" },
      { type: "put", key: "x", value: "x" },
      { type: "del", key: "x" },
      { type: "del", key: "never" },
    ]);
    expect(await all(store, {})).toEqual(["k"]);
    expect(await store.get("k")).toBe("2");
    expect(store.size).toBe(1);
  });

  it("applies a write with an invalid op not at all", async () => {
    const store = new MemoryStore();
    await store.write([{ type: "put", key: "a", value: "1" }]);
    await expect(
      store.write([
        { type: "del", key: "a" },
        { type: "put", key: "b", value: 2 as unknown as string },
      ]),
    ).rejects.toThrow(TypeError);
    expect(await all(store, {})).toEqual(["a"]);
  });

  it("iterates a snapshot: a write during a range read is not seen half-applied", async () => {
    const store = new MemoryStore();
    await store.write(["1", "2", "3", "4"].map((key) => ({ type: "put", key, value: "old" })));
    const seen: [string, string][] = [];
    for await (const pair of store.range({})) {
      seen.push(pair);
      if (pair[0] === "1")
        await store.write([
          { type: "del", key: "2" },
          { type: "put", key: "3", value: "new" },
          { type: "put", key: "25", value: "new" },
        ]);
    }
    expect(seen).toEqual([
      ["1", "old"],
      ["2", "old"],
      ["3", "old"],
      ["4", "old"],
    ]);
    expect(await all(store, {})).toEqual(["1", "25", "3", "4"]);
  });

  it("rejects every call after close", async () => {
    const store = new MemoryStore();
    await store.close();
    await expect(store.get("a")).rejects.toBeInstanceOf(StorageClosed);
    await expect(store.write([])).rejects.toBeInstanceOf(StorageClosed);
    await expect(all(store, {})).rejects.toBeInstanceOf(StorageClosed);
  });
});
