import { describe, expect, it } from "vitest";
import { Harness, SessionFailed, StoragePoisoned } from "../../src/index.js";
import { FaultyStorage } from "../support/faulty-storage.js";
import { MemoryStorage } from "../support/memory.js";
import { GatedModel, text } from "./support/harness.js";

/** Rejects naming `what` when `promise` does not settle within `ms`: a wait that hangs fails the test instead. */
function within<T>(promise: Promise<T>, what: string, ms = 2_000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const rejection = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    (value) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error,
  );

describe("Harness: waits after the session failed", () => {
  it("submission.wait, answerText, whenIdle and stream reject with SessionFailed (the storage error as its cause) when a storage commit fails mid-run", async () => {
    const storage = new FaultyStorage(new MemoryStorage());
    const model = new GatedModel(() => text("never", " stored"));
    model.hold();
    const harness = await Harness.open(storage, { model });
    const root = await harness.root();
    const submission = await root.submit({ type: "input", content: "go" });
    const waiting = rejection(submission.wait());
    const answer = rejection(submission.answerText());
    const stream = rejection(
      (async () => {
        for await (const _event of submission.stream());
      })(),
    );
    const idle = rejection(harness.whenIdle());
    model.allow(1);
    await model.emittedAtLeast(1);
    const poisoned = new StoragePoisoned("injected: write failed with EIO", {
      cause: new Error("EIO"),
    });
    storage.nextCommit = () => Promise.reject(poisoned);
    model.open(); // the run's next commit reaches the failing storage call
    for (const [what, pending] of [
      ["submission.wait()", waiting],
      ["submission.answerText()", answer],
      ["submission.stream()", stream],
      ["harness.whenIdle()", idle],
    ] as const) {
      const error = await within(pending, what);
      expect(error, what).toBeInstanceOf(SessionFailed);
      expect((error as SessionFailed).cause, `${what}: the cause`).toBe(poisoned);
    }
    const later = await within(rejection(submission.wait()), "a wait started after the failure");
    expect(later).toBeInstanceOf(SessionFailed);
    await within(harness.close(), "harness.close()");
  });
});
