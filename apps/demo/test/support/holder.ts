import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

const APP = fileURLToPath(new URL("../..", import.meta.url));

/** Starts a process that owns the storage in `dir` (test/support/hold-storage.ts) and waits until it does. */
export async function startHolder(backend: string, dir: string): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [
      "--conditions=@durably/source",
      "--import",
      "tsx",
      "test/support/hold-storage.ts",
      backend,
      dir,
    ],
    { cwd: APP, stdio: ["ignore", "pipe", "pipe"] },
  );
  let err = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (err += chunk));
  await new Promise<void>((resolve, reject) => {
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      if (chunk.includes("ready")) resolve();
    });
    child.once("exit", (code) =>
      reject(new Error(`the holder exited (${code}) before it was ready: ${err}`)),
    );
  });
  return child;
}

/** Stops a holder the polite way (it closes its storage) and waits for it to exit. */
export async function stopHolder(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}
