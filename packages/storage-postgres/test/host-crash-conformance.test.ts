import { registerCrashConformance } from "@durably/contract-tests";
import { describe, expect, it } from "vitest";
import { open } from "./crash/host-open-child.js";
import { PG_URL, SKIP_REASON } from "./support/server.js";

// The shared kill -9 suite, the session opened through a host whose neighbour
// sessions commit all the time (their calls share rounds with the ones under
// test). The dead child's liveness connection closes with it, so the reopen
// through a new host does not wait for the lease.
const child = {
  childModule: new URL("./crash/host-open-child.ts", import.meta.url),
  open,
  nodeArgs: ["--conditions=@durably/source", "--import", "tsx"],
};

if (PG_URL) registerCrashConformance({ describe, it, expect }, "PostgresHost session", child);
else it.skip(`PostgresHost crash conformance: ${SKIP_REASON}`, () => undefined);
