import { fork } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { CHILD_CONFIG_ENV, isChildMessage } from "./protocol.js";
import type { Ack, ChildConfig, ChildMessage, ParentMessage } from "./protocol.js";
import type { BatchTag } from "./observed-storage.js";

/** Keep this much of the child's stderr for failure messages. */
const STDERR_TAIL = 8_000;

/**
 * The child runner script next to this module: `child-runner.ts` when the
 * suite runs from source (under a TypeScript loader), `child-runner.js` from
 * the built package.
 */
export function childRunnerPath(): string {
  const here = fileURLToPath(import.meta.url);
  const extension = here.endsWith(".ts") ? ".ts" : ".js";
  const runner = fileURLToPath(new URL(`./child-runner${extension}`, import.meta.url));
  if (!existsSync(runner)) throw new Error(`crash suite: child runner not found at ${runner}`);
  return runner;
}

/** `childModule` as a URL the child can import: URLs pass through, paths resolve against the working directory. */
export function moduleUrl(module: string | URL): string {
  if (module instanceof URL) return module.href;
  if (module.startsWith("file:")) return module;
  return pathToFileURL(resolve(module)).href;
}

/**
 * One child runner process, as the parent sees it: what it reported, in
 * order, and how it ended.
 */
export class CrashChild {
  readonly acks: Ack[] = [];
  /** Batch tags of every `storage.commit` call the child announced, in call order. */
  readonly intents: BatchTag[] = [];
  nextSteps: number[] | undefined;
  /** `Date.now()` when the child reported ready. */
  readyAt: number | undefined;
  failure: string | undefined;
  private stderr = "";
  private readonly process: ChildProcess;
  private readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private waiters: (() => void)[] = [];
  private doneCount = 0;
  private ended = false;

  constructor(config: ChildConfig, nodeArgs: readonly string[]) {
    this.process = fork(childRunnerPath(), [], {
      execPath: process.execPath,
      execArgv: [...nodeArgs],
      env: { ...process.env, [CHILD_CONFIG_ENV]: JSON.stringify(config) },
      stdio: ["ignore", "ignore", "pipe", "ipc"],
      serialization: "json",
    });
    this.process.stderr?.setEncoding("utf8");
    this.process.stderr?.on("data", (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-STDERR_TAIL);
    });
    this.process.on("message", (message: unknown) => {
      if (isChildMessage(message)) this.receive(message);
    });
    this.exited = new Promise((resolve) => {
      this.process.on("exit", (code, signal) => {
        this.ended = true;
        resolve({ code, signal });
        this.wake();
      });
    });
    this.process.on("error", (error) => {
      this.failure ??= `could not run the child: ${error.message}`;
      this.wake();
    });
  }

  get pid(): number | undefined {
    return this.process.pid;
  }

  get alive(): boolean {
    return !this.ended;
  }

  private receive(message: ChildMessage): void {
    switch (message.type) {
      case "ready":
        this.nextSteps = message.nextSteps;
        this.readyAt = Date.now();
        break;
      case "intent":
        this.intents.push(...message.batches);
        break;
      case "ack":
        this.acks.push({
          committer: message.committer,
          step: message.step,
          entryId: message.entryId,
          seq: message.seq,
        });
        break;
      case "failed":
        this.failure ??= message.error;
        break;
      case "done":
        break;
    }
    if (message.type === "done") this.doneCount++;
    this.wake();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter();
  }

  /**
   * Resolves when `condition` holds; rejects if the child fails or exits
   * first, or after `timeoutMs`.
   */
  async until(what: string, condition: () => boolean, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (condition()) return;
      if (this.failure !== undefined)
        throw new Error(`the child runner failed while waiting for ${what}: ${this.failure}`);
      if (this.ended)
        throw new Error(`the child runner exited before ${what}; stderr:\n${this.stderr}`);
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(
          `timed out after ${timeoutMs} ms waiting for ${what}; child stderr:\n${this.stderr}`,
        );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  ready(timeoutMs: number): Promise<void> {
    return this.until(
      "the child to open the storage",
      () => this.nextSteps !== undefined,
      timeoutMs,
    );
  }

  /** Command mode: commit `count` more steps and wait for their acknowledgements. */
  async commit(count: number, timeoutMs: number): Promise<void> {
    const target = this.doneCount + 1;
    const message: ParentMessage = { durablyCrash: 1, type: "commit", count };
    this.process.send(message);
    await this.until(`${count} commits`, () => this.doneCount >= target, timeoutMs);
  }

  /** SIGKILL, then wait until the process is gone (its OS locks released). */
  async kill(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (!this.ended) this.process.kill("SIGKILL");
    return this.exited;
  }

  get stderrTail(): string {
    return this.stderr;
  }
}
