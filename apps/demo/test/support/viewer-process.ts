import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

const APP = fileURLToPath(new URL("../..", import.meta.url));

export interface ViewerProcess {
  child: ChildProcess;
  /** The printed URL, token included. */
  url: string;
  origin: string;
  port: number;
  token: string;
  stdout(): string;
  stderr(): string;
  /** Sends `signal` (default SIGTERM) and resolves with how the process ended. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * `demo serve <args>` as a real child process (the source entry under tsx,
 * as `run-demo.ts` runs the demo), resolved once it printed its URL.
 */
export function startViewerProcess(
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): Promise<ViewerProcess> {
  const child = spawn(
    process.execPath,
    ["--conditions=@durably/source", "--import", "tsx", "src/main.ts", "serve", ...args],
    { cwd: APP, env: { ...process.env, NO_COLOR: "1", ...env }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  let err = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (err += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`demo serve printed no URL within 30 s\nstdout: ${out}\nstderr: ${err}`));
    }, 30_000);
    const onData = (): void => {
      const match = /^Open: (http:\/\/\S+)$/m.exec(out);
      if (!match?.[1]) return;
      clearTimeout(timer);
      child.stdout.off("data", onData);
      const url = new URL(match[1]);
      resolve({
        child,
        url: match[1],
        origin: url.origin,
        port: Number(url.port),
        token: url.searchParams.get("token") ?? "",
        stdout: () => out,
        stderr: () => err,
        exited,
        async stop(signal = "SIGTERM") {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          return exited;
        },
      });
    };
    child.stdout.on("data", onData);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(
        new Error(
          `demo serve ended (code ${code}, signal ${signal}) before printing a URL\nstdout: ${out}\nstderr: ${err}`,
        ),
      );
    });
  });
}
