import { isIP } from "node:net";
import { resolve } from "node:path";
import type { Output } from "../render/output.js";
import { DEFAULT_NOTES_FILE } from "./approval-agent.js";
import { startViewerServer } from "./server.js";
import { resolveTarget } from "./target.js";
import { describeError, ViewerStorage } from "./viewer-storage.js";

export interface ServeOptions {
  path: string | undefined;
  host: string | undefined;
  port: number | undefined;
  notes: string | undefined;
}

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

/** Resolves on the first SIGINT or SIGTERM. */
function stopSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (signal: NodeJS.Signals): void => {
      process.off("SIGINT", on);
      process.off("SIGTERM", on);
      resolve(signal);
    };
    process.on("SIGINT", on);
    process.on("SIGTERM", on);
  });
}

/**
 * `demo serve [path]`: opens the storage at `path` (memory when none) and
 * serves the live viewer until SIGINT or SIGTERM, then closes the storage
 * (storing deferred progress). A storage another process holds is served
 * as "locked" and opened from the page once free.
 */
export async function serveCommand(out: Output, options: ServeOptions): Promise<number> {
  // Listen for the stop signal before anything is printed: a signal sent as soon as the URL
  // appears must stop the server cleanly, not kill the process with the storage open.
  const stopped = stopSignal();
  const target = await resolveTarget(options.path);
  const log = (line: string): void => void process.stderr.write(`viewer: ${line}\n`);
  const notesFile = resolve(options.notes ?? DEFAULT_NOTES_FILE);
  const storage = new ViewerStorage(target, { log, notesFile });
  const status = await storage.open();
  if (status.state === "failed") {
    process.stderr.write(`demo: cannot open ${storage.info.location}: ${status.message}\n`);
    await storage.close();
    return 1;
  }
  let server;
  try {
    server = await startViewerServer(storage, {
      ...(options.host !== undefined ? { host: options.host } : {}),
      ...(options.port !== undefined ? { port: options.port } : {}),
      log,
    });
  } catch (error) {
    await storage.close(); // the port is taken, say: leave the storage as it was found
    throw error;
  }
  const { style } = out;
  out.line(style.bold(`Durably viewer: ${storage.info.title} storage at ${storage.info.location}`));
  if (status.state === "locked") {
    out.line(`The storage is locked: ${status.holderText} has it open. ${status.advice}`);
    out.line("The page offers to open it as soon as the lock is free.");
  }
  out.line(`Open: ${server.url}`);
  out.line(style.dim(`Approved save_note calls append to ${notesFile}.`));
  const host = options.host ?? "127.0.0.1";
  if (!LOOPBACK.has(host) && isIP(host) !== 0)
    out.line(
      style.dim(
        `Listening on ${host}: other machines can reach it; only the token keeps them out.`,
      ),
    );
  out.line(
    style.dim("The token in the URL is the key: keep it to yourself. Ctrl-C stops the server."),
  );
  const signal = await stopped;
  out.line(`Stopping (${signal}): closing the storage…`);
  await server.close();
  try {
    await storage.close();
  } catch (error) {
    process.stderr.write(`demo: closing the storage failed: ${describeError(error)}\n`);
    return 1;
  }
  out.line("Stopped.");
  return 0;
}
