import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";

export type ChildEvent = Record<string, unknown> & { event: string };

/** A graph child process and the JSON events it printed so far. */
export interface GraphChild {
  process: ChildProcess;
  events: ChildEvent[];
  /** Resolves with the first event matching `test`. */
  waitFor(test: (e: ChildEvent) => boolean, timeoutMs?: number): Promise<ChildEvent>;
  /** Resolves when the process exits: its exit code and signal, and its stderr. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

const CHILD = new URL("./graph-child.ts", import.meta.url).pathname;

export function startGraphChild(env: Record<string, string>): GraphChild {
  const child = spawn(
    process.execPath,
    ["--conditions=@durably/source", "--import", "tsx", CHILD],
    {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const events: ChildEvent[] = [];
  const waiters: { test: (e: ChildEvent) => boolean; resolve: (e: ChildEvent) => void }[] = [];
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  createInterface({ input: child.stdout }).on("line", (line) => {
    const event = JSON.parse(line) as ChildEvent;
    events.push(event);
    for (const w of waiters.splice(0)) {
      if (w.test(event)) w.resolve(event);
      else waiters.push(w);
    }
  });
  const exited = new Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
    stderr: string;
  }>((resolve) => child.on("exit", (code, signal) => resolve({ code, signal, stderr })));
  return {
    process: child,
    events,
    exited,
    waitFor(test, timeoutMs = 60_000) {
      const seen = events.find(test);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(
              new Error(`child printed no matching event in ${timeoutMs} ms; stderr: ${stderr}`),
            ),
          timeoutMs,
        );
        waiters.push({
          test,
          resolve: (e) => {
            clearTimeout(timer);
            resolve(e);
          },
        });
        void exited.then(({ code, signal }) =>
          reject(new Error(`child exited (${code ?? signal}) before the event; stderr: ${stderr}`)),
        );
      });
    },
  };
}
