/**
 * Child process for the single-owner tests: opens the storage at argv[2],
 * prints `opened <pid>` or `locked`, then holds it until killed (or for at
 * most argv[3] ms, then closes and prints `closed`).
 */
import { StorageLocked } from "@durably/core";
import { openJsonlStorage } from "../../src/index.js";

const [path, holdMs = "30000"] = process.argv.slice(2);
try {
  const storage = await openJsonlStorage(path as string);
  process.stdout.write(`opened ${process.pid}\n`);
  await new Promise((resolve) => setTimeout(resolve, Number(holdMs)));
  await storage.close();
  process.stdout.write("closed\n");
} catch (error) {
  process.stdout.write(error instanceof StorageLocked ? "locked\n" : `error ${String(error)}\n`);
}
