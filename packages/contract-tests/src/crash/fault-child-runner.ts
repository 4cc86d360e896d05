/**
 * The child process of the syscall-fault scenarios; it runs under strace.
 * It opens the backend, commits step after step through a Session, reporting
 * each outcome (acknowledged or the error the writer got), then closes and
 * exits on its own. Around every phase it writes a marker to an inherited
 * file descriptor, so the strace log places each failed syscall in a phase.
 */
import { writeSync } from "node:fs";
import { Session } from "@durably/core";
import type { Storage } from "@durably/core";
import { FAULT_CHILD_CONFIG_ENV, describeErrorChain } from "./fault-protocol.js";
import type { FaultChildConfig, FaultChildMessage } from "./fault-protocol.js";
import { ObservedStorage } from "./observed-storage.js";
import type { BatchTag } from "./observed-storage.js";
import { commitStep, nextSteps } from "./workload.js";

/** The marker file, opened by the parent: an open here would be traced (and counted) like the storage's own. */
export const MARKER_FD = 4;

type OpenModule = { open?: (path: string) => Promise<Storage> };

function send(message: FaultChildMessage): Promise<void> {
  return new Promise((resolve, reject) => {
    if (process.send === undefined) {
      reject(
        new Error("fault child runner: no IPC channel (it must be started by the crash suite)"),
      );
      return;
    }
    process.send(message, undefined, undefined, (error) => (error ? reject(error) : resolve()));
  });
}

function markerWriter(config: FaultChildConfig): (text: string) => void {
  let position = 0;
  return (text) => {
    const line = `${text}\n`;
    if (config.markerSyscall === "pwrite64") position += writeSync(MARKER_FD, line, position);
    else writeSync(MARKER_FD, line);
  };
}

async function main(): Promise<void> {
  process.on("disconnect", () => process.exit(1));
  const text = process.env[FAULT_CHILD_CONFIG_ENV];
  if (text === undefined)
    throw new Error(`fault child runner: ${FAULT_CHILD_CONFIG_ENV} is not set`);
  const config = JSON.parse(text) as FaultChildConfig;
  const mark = markerWriter(config);
  // Issue 16 item 2: an error must reach a caller, never float away unhandled.
  process.on("unhandledRejection", (reason) => {
    void send({ durablyCrash: 1, type: "unhandled", error: describeErrorChain(reason) });
  });
  await send({ durablyCrash: 1, type: "hello", pid: process.pid });

  const adapter = (await import(config.childModule)) as OpenModule;
  if (typeof adapter.open !== "function")
    throw new TypeError(`fault child runner: ${config.childModule} does not export open(path)`);

  const announced = new Set<string>();
  let storage: ObservedStorage | undefined;
  let session: Session | undefined;
  let step: number;
  mark("O");
  try {
    storage = new ObservedStorage(await adapter.open(config.path), async (tags: BatchTag[]) => {
      for (const tag of tags) if (tag !== null) announced.add(`${tag[0]}:${tag[1]}`);
      await send({ durablyCrash: 1, type: "intent", batches: tags });
    });
    session = await Session.open(storage);
    const [next] = await nextSteps(session, [config.committer]);
    if (next === undefined) throw new RangeError("fault child runner: no next step");
    step = next;
  } catch (error) {
    mark("o");
    await send({ durablyCrash: 1, type: "open-failed", error: describeErrorChain(error) });
    await closeAll(mark, session, storage);
    return;
  }
  mark("o");
  await send({ durablyCrash: 1, type: "opened", nextStep: step });

  let acknowledged = 0;
  // A rejected commit that never reached storage (a failed read) is retried; the bound stops a loop.
  for (let attempt = 1; acknowledged < config.steps && attempt <= config.steps * 2; attempt++) {
    mark(`B${attempt}`);
    try {
      const entryId = await commitStep(session, config.committer, 0, step);
      mark(`E${attempt}`);
      await send({
        durablyCrash: 1,
        type: "acknowledged",
        attempt,
        step,
        entryId,
        seq: storage.seqOf(0, step),
      });
      acknowledged++;
      step++;
    } catch (error) {
      mark(`E${attempt}`);
      const wasAnnounced = announced.has(`0:${step}`);
      const sessionFailed = session.failed !== undefined;
      await send({
        durablyCrash: 1,
        type: "rejected",
        attempt,
        step,
        error: describeErrorChain(error),
        announced: wasAnnounced,
        sessionFailed,
      });
      // Announced: the step may or may not be stored, so it cannot be retried under the same number.
      if (sessionFailed || wasAnnounced) break;
    }
  }
  await closeAll(mark, session, undefined);
}

/** Closes the session (which closes the storage) or, when no session opened, the storage; reports the outcome. */
async function closeAll(
  mark: (text: string) => void,
  session: Session | undefined,
  storage: Storage | undefined,
): Promise<void> {
  mark("C");
  let error: string | undefined;
  try {
    if (session !== undefined) await session.close();
    else if (storage !== undefined) await storage.close();
  } catch (caught) {
    error = describeErrorChain(caught);
  }
  mark("c");
  await send({ durablyCrash: 1, type: "closed", error });
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`fault child runner failed: ${describeErrorChain(error)}\n`);
    process.exit(70);
  },
);
