import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

const PACKAGE_DIR = fileURLToPath(new URL("../..", import.meta.url));

/** A real child process running one of the TypeScript scripts in test/crash, with its stdout as lines. */
export class Child {
  readonly process: ChildProcess;
  readonly lines: string[] = [];
  private waiters: { test: (line: string) => boolean; resolve: (line: string) => void }[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr = "";

  constructor(script: string, args: string[]) {
    this.process = spawn(
      process.execPath,
      [
        "--conditions=@durably/source",
        "--import",
        "tsx",
        fileURLToPath(new URL(`../crash/${script}`, import.meta.url)),
        ...args,
      ],
      { cwd: PACKAGE_DIR, stdio: ["ignore", "pipe", "pipe"] },
    );
    let buffer = "";
    this.process.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      buffer += chunk;
      let nl: number;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        this.lines.push(line);
        this.waiters = this.waiters.filter((w) => (w.test(line) ? (w.resolve(line), false) : true));
      }
    });
    this.process.stderr?.setEncoding("utf8").on("data", (chunk: string) => (this.stderr += chunk));
    this.exited = new Promise((resolve) =>
      this.process.on("exit", (code, signal) => resolve({ code, signal })),
    );
  }

  /** The first stdout line (already seen or to come) that matches. Rejects if the child exits first. */
  waitFor(test: (line: string) => boolean, what = "a line"): Promise<string> {
    const seen = this.lines.find(test);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      this.waiters.push({ test, resolve });
      void this.exited.then(() =>
        reject(new Error(`child exited before printing ${what}; stderr: ${this.stderr}`)),
      );
    });
  }

  /** SIGKILL, then wait until the kernel has reaped it. */
  async kill(): Promise<void> {
    this.process.kill("SIGKILL");
    await this.exited;
  }
}
