import { spawn, type ChildProcess } from "node:child_process";
import { extname } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const childPath = fileURLToPath(
  new URL(`./postgres-host-child${extname(fileURLToPath(import.meta.url))}`, import.meta.url),
);

/** A child's JSON lines, awaited one at a time. */
function replies(child: ChildProcess): () => Promise<Record<string, unknown>> {
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  return async () => {
    const next = await lines.next();
    if (next.done) throw new Error(`postgres-host-child ended early; stderr: ${stderr}`);
    return JSON.parse(next.value) as Record<string, unknown>;
  };
}

/**
 * `processes` app-server processes, each with its own host of `sessions`
 * sessions x `perSession` writers, committing to the same database at the
 * same time; `run` returns the commits of all of them.
 */
export async function startHostProcesses(
  url: string,
  processes: number,
  sessions: number,
  perSession: number,
): Promise<{ run(deadline: number): Promise<number>; close(): Promise<void> }> {
  const children = Array.from({ length: processes }, () => {
    const child = spawn(
      process.execPath,
      [...process.execArgv, childPath, url, String(sessions), String(perSession)],
      { stdio: ["pipe", "pipe", "pipe"] },
    );
    return { child, next: replies(child) };
  });
  await Promise.all(children.map((c) => c.next()));
  const all = async (line: string) => {
    for (const c of children) c.child.stdin.write(`${line}\n`);
    return Promise.all(children.map((c) => c.next()));
  };
  return {
    async run(deadline) {
      const answers = await all(`run ${Math.max(0, deadline - performance.now())}`);
      return answers.reduce((sum, a) => sum + (a.commits as number), 0);
    },
    async close() {
      await all("close");
    },
  };
}
