import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { fileURLToPath } from "node:url";

/** Node flags that let a child load this package's TypeScript sources directly. */
const NODE_ARGS = ["--conditions=@durably/source", "--import", "tsx"];

export interface Child {
  process: ChildProcessWithoutNullStreams;
  /** Complete stdout lines so far (a line cut by a kill is not included). */
  lines: string[];
  /** Resolves with the first line matching `pattern`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr(): string;
}

export function spawnChild(script: string, args: readonly string[]): Child {
  const file = fileURLToPath(new URL(`./crash/${script}`, import.meta.url));
  const child = spawn(process.execPath, [...NODE_ARGS, file, ...args], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  const lines: string[] = [];
  const waiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  let partial = "";
  let err = "";
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk: string) => {
    partial += chunk;
    let newline: number;
    while ((newline = partial.indexOf("\n")) >= 0) {
      const line = partial.slice(0, newline);
      partial = partial.slice(newline + 1);
      lines.push(line);
      for (const waiter of waiters.splice(0)) {
        if (waiter.pattern.test(line)) waiter.resolve(line);
        else waiters.push(waiter);
      }
    }
  });
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => (err += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  return {
    process: child,
    lines,
    exited,
    stderr: () => err,
    waitFor(pattern, timeoutMs = 20_000) {
      const seen = lines.find((line) => pattern.test(line));
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise<string>((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(
              new Error(
                `child ${script} printed no line matching ${pattern} in ${timeoutMs} ms; stderr:\n${err}`,
              ),
            ),
          timeoutMs,
        );
        const settle = (line: string) => {
          clearTimeout(timer);
          resolve(line);
        };
        waiters.push({ pattern, resolve: settle });
        void exited.then(() => {
          clearTimeout(timer);
          reject(new Error(`child ${script} exited before printing ${pattern}; stderr:\n${err}`));
        });
      });
    },
  };
}
