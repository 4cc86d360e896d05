import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

/** The command line that runs a TypeScript file of this package (workspace sources, no build). */
export function tsCommand(file: string, args: string[]): string[] {
  const path = fileURLToPath(new URL(file, import.meta.url));
  return [process.execPath, "--conditions=@durably/source", "--import", "tsx", path, ...args];
}

/** Spawns a TypeScript file of this package as a real child process; `prefix` runs it under another command (strace). */
export function spawnTs(
  file: string,
  args: string[],
  options: { prefix?: string[]; stdin?: boolean } = {},
): ChildProcess {
  const [command, ...rest] = [...(options.prefix ?? []), ...tsCommand(file, args)] as [
    string,
    ...string[],
  ];
  return spawn(command, rest, {
    stdio: [options.stdin ? "pipe" : "ignore", "pipe", "pipe"],
    cwd: fileURLToPath(new URL("..", import.meta.url)),
  });
}

/** Resolves with the child's first stdout line equal to `line`; rejects with its stderr if it exits first. */
export function waitForLine(child: ChildProcess, line: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    child.stderr?.on("data", (chunk: Buffer) => (err += chunk.toString()));
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (out.split("\n").includes(line)) resolve();
    });
    child.once("exit", (code, signal) =>
      reject(new Error(`child exited (${code ?? signal}) before "${line}": ${err}`)),
    );
  });
}

export function killed(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.kill("SIGKILL");
  });
}
