import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";

export type Message = Record<string, unknown>;

/**
 * A host child (fencing/host-child.ts) and its stdout as messages: `next`
 * waits for one, `acks` collects stream acks as "index/n", `failed` the
 * stream failures.
 */
export function startHostChild(env: Record<string, string>): {
  child: ChildProcess;
  next: () => Promise<Message>;
  acks: Set<string>;
  failed: Message[];
} {
  const child = spawn(
    process.execPath,
    [
      "--conditions=@durably/source",
      "--import",
      "tsx",
      new URL("../fencing/host-child.ts", import.meta.url).pathname,
    ],
    { env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "inherit"] },
  );
  const queue: Message[] = [];
  const waiters: ((m: Message) => void)[] = [];
  const acks = new Set<string>();
  const failed: Message[] = [];
  createInterface({ input: child.stdout }).on("line", (line) => {
    let message: Message;
    try {
      message = JSON.parse(line) as Message;
    } catch {
      return;
    }
    if (Array.isArray(message.ack)) return void acks.add((message.ack as number[]).join("/"));
    if (Array.isArray(message.failed)) return void failed.push(message);
    const waiter = waiters.shift();
    if (waiter) waiter(message);
    else queue.push(message);
  });
  const next = () => {
    const queued = queue.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise<Message>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("host child said nothing for 30 s")), 30_000);
      child.once("exit", (code) => reject(new Error(`host child exited (${code})`)));
      waiters.push((m) => {
        clearTimeout(timer);
        resolve(m);
      });
    });
  };
  return { child, next, acks, failed };
}
