/**
 * The child process of the crash suite. It opens the backend through the
 * adapter's `childModule`, opens a Session over it and commits steps,
 * reporting each acknowledged one to the parent before starting the next.
 * The parent kills it with SIGKILL; it never exits on its own.
 */
import { Session } from "@durably/core";
import type { Storage } from "@durably/core";
import { ObservedStorage } from "./observed-storage.js";
import type { BatchTag } from "./observed-storage.js";
import { CHILD_CONFIG_ENV, isParentMessage } from "./protocol.js";
import type { ChildConfig, ChildMessage, ParentMessage } from "./protocol.js";
import { commitStep, nextSteps } from "./workload.js";

type OpenModule = { open?: (path: string) => Promise<Storage> };

/** Resolves once the message is handed to the IPC channel, so a kill after it cannot lose it. */
function send(message: ChildMessage): Promise<void> {
  return new Promise((resolve, reject) => {
    if (process.send === undefined) {
      reject(
        new Error("crash child runner: no IPC channel (it must be started by the crash suite)"),
      );
      return;
    }
    process.send(message, undefined, undefined, (error) => (error ? reject(error) : resolve()));
  });
}

function describeError(error: unknown): string {
  if (error instanceof Error) return error.stack ?? `${error.name}: ${error.message}`;
  return String(error);
}

async function main(): Promise<void> {
  // An orphan must not go on owning (and writing) the storage once the suite is gone.
  process.on("disconnect", () => process.exit(1));
  const text = process.env[CHILD_CONFIG_ENV];
  if (text === undefined) throw new Error(`crash child runner: ${CHILD_CONFIG_ENV} is not set`);
  const config = JSON.parse(text) as ChildConfig;

  const adapter = (await import(config.childModule)) as OpenModule;
  if (typeof adapter.open !== "function")
    throw new TypeError(`crash child runner: ${config.childModule} does not export open(path)`);
  const storage = new ObservedStorage(await adapter.open(config.path), (tags: BatchTag[]) =>
    send({ durablyCrash: 1, type: "intent", batches: tags }),
  );
  const session = await Session.open(storage);
  const steps = await nextSteps(session, config.committers);
  await send({ durablyCrash: 1, type: "ready", pid: process.pid, nextSteps: [...steps] });

  const commitOne = async (committer: number): Promise<void> => {
    const ids = config.committers[committer];
    const step = steps[committer];
    if (ids === undefined || step === undefined)
      throw new RangeError(`crash child runner: no committer ${committer}`);
    const entryId = await commitStep(session, ids, committer, step);
    steps[committer] = step + 1;
    await send({
      durablyCrash: 1,
      type: "ack",
      committer,
      step,
      entryId,
      seq: storage.seqOf(committer, step),
    });
  };

  if (config.mode === "loop") {
    // Every committer commits on its own, so with several the Session groups their batches.
    await Promise.all(
      config.committers.map(async (_ids, committer) => {
        for (;;) await commitOne(committer);
      }),
    );
    return;
  }

  // Command mode: idle (owning the storage) until told to commit.
  let turn = 0;
  let queue = Promise.resolve();
  process.on("message", (message: unknown) => {
    if (!isParentMessage(message)) return;
    const command: ParentMessage = message;
    queue = queue
      .then(async () => {
        for (let i = 0; i < command.count; i++) {
          await commitOne(turn % config.committers.length);
          turn++;
        }
        await send({ durablyCrash: 1, type: "done" });
      })
      .catch(fail);
  });
}

function fail(error: unknown): void {
  const text = describeError(error);
  process.stderr.write(`crash child runner failed: ${text}\n`);
  send({ durablyCrash: 1, type: "failed", error: text }).then(
    () => process.exit(1),
    () => process.exit(1),
  );
}

main().catch(fail);
