import { registerCrashConformance, registerHarnessConformance } from "@durably/contract-tests";
import { describe, expect, it } from "vitest";
import { open } from "./crash/open-child.js";
import { PG_URL, SKIP_REASON, sessionFactory } from "./support/server.js";

// The shared kill -9 suite: a real child process (node + tsx over the TypeScript
// sources) commits through a Session into one session of the test server and is
// SIGKILLed at seeded random moments; this process reopens the session and checks it.
// The dead child's connection closes with it, which frees its liveness lock: the
// reopen does not wait for the lease to expire.
const child = {
  childModule: new URL("./crash/open-child.ts", import.meta.url),
  open,
  nodeArgs: ["--conditions=@durably/source", "--import", "tsx"],
};

if (PG_URL) {
  registerCrashConformance({ describe, it, expect }, "PostgresStorage", child);
  registerHarnessConformance({ describe, it }, "PostgresStorage", {
    persistent: true,
    factory: sessionFactory("harness"),
    crash: child,
  });
} else it.skip(`PostgresStorage crash conformance: ${SKIP_REASON}`, () => undefined);
