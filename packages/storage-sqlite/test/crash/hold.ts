/**
 * Single-owner child: `hold <path>` opens the storage, prints `ready` and
 * keeps it open until killed; `try <path>` opens it and prints `opened` or
 * `failed <error name> <message>`, then exits.
 */
import { open } from "./open-child.js";

const [mode, path] = process.argv.slice(2);
if (path === undefined || (mode !== "hold" && mode !== "try"))
  throw new Error("usage: hold.ts hold|try <path>");
try {
  const storage = await open(path);
  if (mode === "hold") {
    process.stdout.write("ready\n");
    setInterval(() => undefined, 60_000);
  } else {
    process.stdout.write("opened\n");
    await storage.close();
  }
} catch (error) {
  const e = error as Error;
  process.stdout.write(`failed ${e.name} ${e.message}\n`);
}
