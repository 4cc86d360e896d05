import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const APP = fileURLToPath(new URL("..", import.meta.url));

export interface DemoResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the demo's source entry as a real child process (tsx, workspace sources), as a user would run it. */
export function runDemo(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<DemoResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["--conditions=@durably/source", "--import", "tsx", "src/main.ts", ...args],
      { cwd: APP, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}
