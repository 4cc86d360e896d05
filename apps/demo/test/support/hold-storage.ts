/**
 * A child process that owns a storage and does nothing else: opened by the
 * locked-storage tests, it prints "ready" once the storage is open and
 * closes it on SIGTERM (exit code 0).
 */
import { BACKENDS } from "../../src/backends.ts";
import type { BackendName } from "../../src/backend-names.ts";

const [backend, dir] = process.argv.slice(2);
if (backend === undefined || dir === undefined) {
  process.stderr.write("usage: hold-storage <backend> <dir>\n");
  process.exit(2);
}
const storage = await BACKENDS[backend as BackendName].open(dir);
process.on("SIGTERM", () => {
  void storage.close().then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`close failed: ${String(error)}\n`);
      process.exit(1);
    },
  );
});
setInterval(() => undefined, 60_000);
process.stdout.write("ready\n");
