/**
 * One commit case in a process of its own (`isolated.ts`): builds the named
 * case list, opens case `index`, then runs rounds when the parent asks.
 *
 * node case-child.js <list> <writers> <index>   (forked with an IPC channel)
 */
import { buildCases, type CaseListName } from "./case-lists.js";
import { localRounds, type RoundRunner } from "./harness.js";
import type { ChildReply, ChildRequest } from "./isolated.js";
import { Scratch } from "./paths.js";

const [name, writers, index] = process.argv.slice(2);
const send = (reply: ChildReply) => process.send?.(reply);
const failed = (error: unknown): ChildReply => ({
  type: "failed",
  message: error instanceof Error ? (error.stack ?? error.message) : String(error),
});
const scratch = new Scratch();
let runner: RoundRunner | undefined;

async function answer(request: ChildRequest): Promise<void> {
  if (runner === undefined) throw new Error("the case is not open");
  if (request.type === "round")
    send({ type: "round", result: await runner.round(request.ms, request.warmupMs) });
  else if (request.type === "stats") send({ type: "stats", stats: (await runner.stats()) ?? null });
  else {
    await runner.close();
    scratch.dispose();
    process.disconnect();
  }
}

try {
  const cases = buildCases({ name: name as CaseListName, writers: Number(writers) }, scratch);
  const chosen = cases[Number(index)];
  if (chosen === undefined) throw new RangeError(`no case ${index} in list ${name}`);
  runner = localRounds(await chosen.open());
  process.on("message", (request: ChildRequest) => {
    answer(request).catch((error: unknown) => send(failed(error)));
  });
  send({ type: "opened" });
} catch (error) {
  send(failed(error));
  scratch.dispose();
  process.disconnect();
}
