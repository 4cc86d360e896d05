import { MAX_COMMIT_BYTES, MAX_VALUE_BYTES } from "@durably/core";
import { sessionScenario, type SessionRuleGroup } from "./api.js";
import { openSession, ROOT } from "./support.js";

/** The longest JavaScript string V8 builds (2^29 - 24 UTF-16 units): one storage call's text must stay below it. */
const V8_MAX_STRING_LENGTH = 2 ** 29 - 24;

/**
 * Cases that write hundreds of megabytes: opt-in (`largeValues: true`), for
 * the backends that build one string per storage call (JSONL, the store).
 */
export const largeValues: SessionRuleGroup = {
  rule: "large values",
  scenarios: [
    sessionScenario(
      "commits each just under MAX_VALUE_BYTES, made concurrently, are all stored in several storage calls, though together their JSON text is longer than a JavaScript string can be",
      async ({ storage, check }) => {
        const session = await openSession(storage, check);
        // Each U+0001 is six bytes of JSON text (\u0001): a 5.6 M-unit string is just under the limit.
        const units = Math.floor((MAX_VALUE_BYTES - 2) / 6);
        const data = "\u0001".repeat(units);
        const writers = Math.ceil(V8_MAX_STRING_LENGTH / (units * 6)) + 1;
        const before = storage.commitCalls.length;
        const results = await Promise.allSettled(
          Array.from({ length: writers }, (_, i) =>
            session.commit((tx) => tx.appendEntry(ROOT, { kind: `w${i}`, data })),
          ),
        );
        const failed = results.find((r) => r.status === "rejected");
        check.ok(
          failed === undefined,
          `${writers} concurrent commits of ${units * 6 + 2} bytes of JSON text each are stored (first failure: ${failed ? String(failed.reason).slice(0, 300) : "none"})`,
        );
        check.same(session.failed, undefined, "the session's failed state");
        const calls = storage.commitCalls.slice(before);
        const perCall = Math.floor(MAX_COMMIT_BYTES / MAX_VALUE_BYTES);
        check.ok(
          calls.length > 1 && calls.every((batches) => batches <= perCall),
          `storage.commit calls carried ${JSON.stringify(calls)} batches; expected several calls of at most ${perCall}`,
        );
        const entries = results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
        for (const entry of entries) {
          const stored = await storage.inner.entry(entry.id);
          check.ok(
            stored?.entry.data === data,
            `entry ${entry.id} read back whole by the storage (length ${String((stored?.entry.data as string | undefined)?.length)}, expected ${units})`,
          );
        }
        await session.close();
      },
      120_000,
    ),
  ],
};
