import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { buildCases, type CaseListRef } from "./case-lists.js";
import {
  measureRounds,
  type CaseResult,
  type MeasureOptions,
  type RoundResult,
  type RoundRunner,
} from "./harness.js";
import { Scratch } from "./paths.js";

/** What a case's child process answers (`case-child.ts`). */
export type ChildReply =
  | { type: "opened" }
  | { type: "round"; result: RoundResult }
  | { type: "stats"; stats: { calls: number; batches: number } | null }
  | { type: "failed"; message: string };

/** What the parent asks a case's child process. */
export type ChildRequest =
  { type: "round"; ms: number; warmupMs: number } | { type: "stats" } | { type: "close" };

/**
 * Measures each case of `list` in a process of its own, in interleaved
 * rounds (`measureRounds`): the parent only sends "run a round" and collects
 * the rate and the child's own CPU time. A user's process runs Durably or
 * raw storage or LangGraph, never all of them; in one process the cases
 * share the JIT's feedback on library code they all call, and a raw
 * baseline's calls made a Durably case up to 1.7x faster than it runs alone
 * (storage-store's `batch()` with encoding options, measured).
 */
export async function measureIsolated(
  list: CaseListRef,
  options: MeasureOptions,
): Promise<CaseResult[]> {
  // The parent needs only the cases' names; each child builds and opens its own.
  const scratch = new Scratch();
  const cases = buildCases(list, scratch);
  scratch.dispose();
  // Children start while the one before them opens, two at a time: forty processes
  // loading at once on a small machine starve everything else running there (a test
  // run's other suites timed out).
  const children: CaseChild[] = [];
  const child = (index: number): CaseChild | undefined => {
    if (index >= cases.length) return undefined;
    return (children[index] ??= new CaseChild(list, index));
  };
  try {
    return await measureRounds(
      cases,
      (_, index) => {
        child(index + 1);
        return (child(index) as CaseChild).opened();
      },
      options,
    );
  } finally {
    await Promise.all(children.map((c) => c.close()));
  }
}

const CHILD_SCRIPT = fileURLToPath(
  new URL(import.meta.url.endsWith(".ts") ? "./case-child.ts" : "./case-child.js", import.meta.url),
);

/** One case's child process, answering one request at a time. */
class CaseChild implements RoundRunner {
  readonly #child: ChildProcess;
  readonly #label: string;
  #waiting: ((reply: ChildReply) => void) | undefined;
  #ended: string | undefined;
  readonly #open: Promise<ChildReply>;

  constructor(list: CaseListRef, index: number) {
    this.#label = `${list.name} case ${index}`;
    this.#child = fork(CHILD_SCRIPT, [list.name, String(list.writers), String(index)], {
      execArgv: process.execArgv,
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    this.#open = this.#next();
    this.#child.on("message", (reply: ChildReply) => {
      const waiting = this.#waiting;
      this.#waiting = undefined;
      waiting?.(reply);
    });
    this.#child.on("exit", (code, signal) => {
      this.#ended = `exited (${signal ?? `code ${code}`})`;
      const waiting = this.#waiting;
      this.#waiting = undefined;
      waiting?.({ type: "failed", message: this.#ended });
    });
  }

  #next(): Promise<ChildReply> {
    if (this.#ended !== undefined) return Promise.resolve({ type: "failed", message: this.#ended });
    return new Promise((resolve) => (this.#waiting = resolve));
  }

  async #ask(request: ChildRequest): Promise<ChildReply> {
    const reply = this.#next();
    this.#child.send(request);
    return this.#expect(await reply);
  }

  #expect(reply: ChildReply): ChildReply {
    if (reply.type === "failed") throw new Error(`${this.#label}: ${reply.message}`);
    return reply;
  }

  async opened(): Promise<RoundRunner> {
    this.#expect(await this.#open);
    return this;
  }

  async round(ms: number, warmupMs = 0): Promise<RoundResult> {
    const reply = await this.#ask({ type: "round", ms, warmupMs });
    if (reply.type !== "round")
      throw new Error(`${this.#label}: answered ${reply.type} to a round`);
    return reply.result;
  }

  async stats(): Promise<{ calls: number; batches: number } | undefined> {
    const reply = await this.#ask({ type: "stats" });
    if (reply.type !== "stats") throw new Error(`${this.#label}: answered ${reply.type} to stats`);
    return reply.stats ?? undefined;
  }

  async close(): Promise<void> {
    if (this.#ended !== undefined) return;
    const exited = new Promise<void>((resolve) => this.#child.once("exit", () => resolve()));
    if (this.#child.connected) this.#child.send({ type: "close" } satisfies ChildRequest);
    else this.#child.kill("SIGKILL");
    // A child whose case leaves a handle open after close would keep the run waiting.
    const stuck = setTimeout(() => this.#child.kill("SIGKILL"), 30_000);
    await exited;
    clearTimeout(stuck);
  }
}
