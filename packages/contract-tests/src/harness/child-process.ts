import { fork, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { moduleUrl } from "../crash/child-process.js";
import {
  HARNESS_CHILD_ENV,
  isHarnessChildMessage,
  type HarnessChildConfig,
  type HarnessChildMessage,
} from "./protocol.js";
import type { CrashScenario } from "./scripts.js";

const STDERR_TAIL = 8_000;

function childPath(): string {
  const here = fileURLToPath(import.meta.url);
  const extension = here.endsWith(".ts") ? ".ts" : ".js";
  const path = fileURLToPath(new URL(`./child${extension}`, import.meta.url));
  if (!existsSync(path)) throw new Error(`harness crash suite: child not found at ${path}`);
  return path;
}

/** One harness child process: its messages in order, and a SIGKILL. */
export class HarnessChild {
  readonly messages: HarnessChildMessage[] = [];
  private stderr = "";
  private readonly process: ChildProcess;
  private readonly exited: Promise<void>;
  private waiters: (() => void)[] = [];
  private ended = false;

  constructor(
    childModule: string | URL,
    path: string,
    scenario: CrashScenario,
    nodeArgs: readonly string[],
    model: { module?: string | URL; scriptId: string },
  ) {
    const config: HarnessChildConfig = {
      childModule: moduleUrl(childModule),
      ...(model.module !== undefined ? { modelModule: moduleUrl(model.module) } : {}),
      path,
      scenario,
      scriptId: model.scriptId,
    };
    this.process = fork(childPath(), [], {
      execPath: process.execPath,
      execArgv: [...nodeArgs],
      env: { ...process.env, [HARNESS_CHILD_ENV]: JSON.stringify(config) },
      stdio: ["ignore", "ignore", "pipe", "ipc"],
      serialization: "json",
    });
    this.process.stderr?.setEncoding("utf8");
    this.process.stderr?.on("data", (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-STDERR_TAIL);
    });
    this.process.on("message", (message: unknown) => {
      if (isHarnessChildMessage(message)) {
        this.messages.push(message);
        this.wake();
      }
    });
    this.exited = new Promise((resolve) =>
      this.process.on("exit", () => {
        this.ended = true;
        this.wake();
        resolve();
      }),
    );
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  private describe(what: string): string {
    const failed = this.messages.find((m) => m.type === "failed");
    return `harness child: ${what}${failed?.type === "failed" ? `; it reported: ${failed.error}` : ""}${
      this.stderr ? `\nstderr:\n${this.stderr}` : ""
    }`;
  }

  /** Resolves with the first message matching `match`; rejects if the child fails, exits or times out. */
  async waitFor<T extends HarnessChildMessage>(
    what: string,
    match: (m: HarnessChildMessage) => m is T,
    timeoutMs = 20_000,
  ): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.messages.find(match);
      if (found) return found;
      if (this.messages.some((m) => m.type === "failed"))
        throw new Error(this.describe(`failed before ${what}`));
      if (this.ended) throw new Error(this.describe(`exited before ${what}`));
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(this.describe(`timed out waiting for ${what}`));
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** SIGKILL; resolves with `Date.now()` at the kill once the process is gone. */
  async kill(): Promise<number> {
    const at = Date.now();
    if (this.ended) throw new Error(this.describe("exited on its own before the kill"));
    this.process.kill("SIGKILL");
    await this.exited;
    const failed = this.messages.find((m) => m.type === "failed");
    if (failed) throw new Error(this.describe("reported a failure before the kill"));
    return at;
  }
}
