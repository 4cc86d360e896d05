import { describe, expect, it } from "vitest";
import {
  StorageCorrupted,
  StorageVersionError,
  type ConversationId,
  type EntryId,
  type StorageWrite,
} from "@durably/core";
import { StoreStorage, dumpKeys, type KeyValueStore } from "../src/index.js";
import { crcBytes, crcText } from "../src/crc32c.js";
import { frame, unframe } from "../src/framing.js";
import { backends, withFreshStore } from "./backends.js";
import { framed } from "./framing-helper.js";

const C = 1 as ConversationId;
const none = () => undefined;
const seed: StorageWrite[] = [
  { type: "conversation", value: { id: C } },
  {
    type: "entry",
    value: { id: 2, conversationId: C, kind: "note", data: { text: "hello", n: 7 }, head: 2 },
  } as unknown as StorageWrite,
];
const ENTRY_KEY = "e/0000000000000001/0000000000000002";

/** Changes the last digit of `raw` to another digit: the value stays JSON of the same shape, with different data. */
function otherDigit(raw: string): string {
  const at = raw.search(/\d(?=\D*$)/);
  const digit = Number(raw[at]);
  return raw.slice(0, at) + String((digit + 1) % 10) + raw.slice(at + 1);
}

async function rawValue(store: KeyValueStore, key: string): Promise<string> {
  const value = await store.get(key);
  if (value === undefined) throw new Error(`no ${key} in the store`);
  return value;
}

for (const backend of backends) {
  describe(`StoreStorage on ${backend.name} > checked records`, () => {
    it("a changed character inside a stored entry reads back as StorageCorrupted naming the key, never as different data", async () => {
      const { store, cleanup } = backend.fresh();
      const storage = await StoreStorage.open(store);
      try {
        await storage.commit([seed], none);
        const raw = await rawValue(store, ENTRY_KEY);
        await store.write([{ type: "put", key: ENTRY_KEY, value: raw.replace("hello", "hellp") }]);
        for (const read of [
          () => storage.entry(2 as EntryId),
          () => storage.scanEntries({ conversationId: C }, 10),
          () => storage.latestHead(C),
        ]) {
          const error = await read().then(
            (value) => value,
            (e: unknown) => e,
          );
          expect(error, `read gave ${JSON.stringify(error)}`).toBeInstanceOf(StorageCorrupted);
          expect((error as StorageCorrupted).location.key).toBe(ENTRY_KEY);
          expect((error as Error).message).toContain(`key ${ENTRY_KEY}: checksum mismatch`);
        }
      } finally {
        await storage.close();
        cleanup();
      }
    });

    it("a valid value that turns up under another key fails the check (the key is part of the sum)", async () => {
      const { store, cleanup } = backend.fresh();
      const storage = await StoreStorage.open(store);
      try {
        await storage.commit([seed], none);
        const moved = "e/0000000000000001/0000000000000003";
        await store.write([{ type: "put", key: moved, value: await rawValue(store, ENTRY_KEY) }]);
        const error = await storage
          .scanEntries({ conversationId: C, order: "ascending" }, 10)
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(StorageCorrupted);
        expect((error as StorageCorrupted).location.key).toBe(moved);
      } finally {
        await storage.close();
        cleanup();
      }
    });
  });
}

for (const backend of backends.filter((b) => b.persistent)) {
  describe(`StoreStorage on ${backend.name} > checked records after reopen`, () => {
    it("one changed digit in any stored value is StorageCorrupted naming that key on the read that meets it", async () => {
      await withFreshStore(backend, async ({ store, reopen }) => {
        const storage = await StoreStorage.open(store);
        await storage.commit([seed], none);
        await storage.close();
        const open = reopen as () => KeyValueStore;
        const raw = open();
        await raw.open?.();
        const pairs = await dumpKeys(raw);
        await raw.close();
        const records = pairs.filter((p) => /^(c|e|ei)\//.test(p.key));
        expect(records.map((p) => p.key)).toEqual([
          "c/0000000000000001",
          ENTRY_KEY,
          "ei/0000000000000002",
        ]);
        for (const { key, value } of records) {
          const edit = open();
          await edit.open?.();
          await edit.write([{ type: "put", key, value: otherDigit(value) }]);
          await edit.close();
          const reopened = await StoreStorage.open(open());
          try {
            const error = await (
              key.startsWith("c/") ? reopened.conversation(C) : reopened.entry(2 as EntryId)
            ).catch((e: unknown) => e);
            expect(error, `after changing a digit of ${key}`).toBeInstanceOf(StorageCorrupted);
            expect((error as StorageCorrupted).location.key).toBe(key);
          } finally {
            await reopened.close();
          }
          const fix = open();
          await fix.open?.();
          await fix.write([{ type: "put", key, value }]);
          await fix.close();
        }
      });
    });

    it("a store of the previous format (no checksums) is refused with StorageVersionError, and left as it was", async () => {
      await withFreshStore(backend, async ({ store, reopen }) => {
        await store.open?.();
        const formatOne = [
          { type: "put" as const, key: "m/format", value: "1" },
          { type: "put" as const, key: "m/counters", value: '{"seq":1,"ids":1}' },
          { type: "put" as const, key: "c/0000000000000001", value: '{"id":1}' },
        ];
        await store.write(formatOne);
        await store.close();
        const error = await StoreStorage.open((reopen as () => KeyValueStore)()).catch(
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(StorageVersionError);
        expect((error as Error).message).toMatch(
          /m\/format is 1: .*reads format 2 only.*(Nothing was changed|Nothing was written to the store, but LevelDB opened)/,
        );
        const raw = (reopen as () => KeyValueStore)();
        await raw.open?.();
        expect(await dumpKeys(raw)).toEqual(
          formatOne
            .map(({ key, value }) => ({ key, value }))
            .sort((a, b) => (a.key < b.key ? -1 : 1)),
        );
        await raw.close();
      });
    });
  });
}

describe("value framing", () => {
  it("is CRC-32C as LevelDB and iSCSI define it (check value of '123456789' is e3069283)", () => {
    const ascii = new TextEncoder().encode("123456789");
    expect(crcBytes(0, ascii)).toBe(0xe3069283);
    expect(crcText(0, "123456789")).toBe(0xe3069283);
    // Sixteen bytes a step agree with the definition (one bit at a time), for every alignment and length.
    const bitwise = (bytes: Uint8Array, start: number, end: number) => {
      let c = 0xffffffff;
      for (let i = start; i < end; i++) {
        c ^= bytes[i] as number;
        for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
      }
      return ~c >>> 0;
    };
    const bytes = Uint8Array.from({ length: 300 }, (_x, i) => (i * 2654435761) >>> 24);
    for (let start = 0; start < 17; start++)
      for (const length of [0, 1, 15, 16, 17, 31, 32, 33, 100, 283 - start])
        expect(crcBytes(0, bytes, start, start + length)).toBe(
          bitwise(bytes, start, start + length),
        );
    // A running sum over pieces is the sum of the whole.
    expect(crcBytes(crcBytes(0, bytes, 0, 37), bytes, 37)).toBe(crcBytes(0, bytes));
  });

  it("sums the UTF-8 of the key, a zero byte and the payload, as the README documents", () => {
    for (const [key, payload] of [
      ["c/0000000000000001", '{"id":1}'],
      ["e/0000000000000001/0000000000000002", '{"text":"ünïcødé ✓ 𝄞 and a lone \\ud800"}'],
      ["sr/0000000000000001/req%002F1/0000000000000003", ""],
    ] as const) {
      expect(frame(key, payload)).toBe(framed(key, payload));
      expect(unframe(key, framed(key, payload))).toBe(payload);
    }
    // A lone surrogate is summed as U+FFFD, the way TextEncoder writes it.
    expect(crcText(0, "x\ud800y")).toBe(crcBytes(0, new TextEncoder().encode("x\ud800y")));
  });

  it("frames any key and payload as the documented formula does: every UTF-16 unit, every length, every checksum's leading zeros", () => {
    // Seeded, so a failure names a case that can be run again.
    let seed = 0x9e3779b9;
    const next = () => ((seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0), seed);
    const units = [
      0x41, 0x2f, 0x00, 0x7f, 0x80, 0x7ff, 0x800, 0xe9, 0x2713, 0xd834, 0xdd1e, 0xd800, 0xdfff,
      0xfffd, 0xffff,
    ];
    const text = (length: number) => {
      let out = "";
      for (let i = 0; i < length; i++)
        out += String.fromCharCode(
          next() % 3 === 0 ? (units[next() % units.length] as number) : 0x20 + (next() % 95),
        );
      return out;
    };
    const leading = new Set<number>();
    for (let n = 0; n < 3000; n++) {
      // Up to 6000 units: past the reused buffer's first size, so it grows mid-run.
      const key = text(next() % 40);
      const payload = text(n % 100 === 0 ? 6000 - (next() % 50) : next() % 300);
      const value = frame(key, payload);
      expect(value, `case ${n}`).toBe(framed(key, payload));
      expect(unframe(key, value)).toBe(payload);
      leading.add((value.match(/^0*/) as RegExpMatchArray)[0].length);
    }
    // Checksums with leading zero digits were among them: the hex keeps all eight digits.
    expect([...leading].some((zeros) => zeros > 0)).toBe(true);
  });

  it("rejects a value without a checksum field, naming the key", () => {
    expect(() => unframe("t/0000000000000004", '{"id":4}')).toThrow(
      /key t\/0000000000000004: stored value has no checksum/,
    );
  });
});
