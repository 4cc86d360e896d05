import type { TestProject } from "vitest/node";
import { systemTool } from "../../../../scripts/system-tools.mjs";
import { startCluster, stopCluster } from "../../scripts/throwaway-cluster.mjs";

declare module "vitest" {
  export interface ProvidedContext {
    /** The server the tests use, or "" when none is reachable. */
    pgUrl: string;
    /** Why the PostgreSQL tests are skipped, when they are. */
    pgSkipReason: string;
  }
}

/**
 * The PostgreSQL server for this test run: `DURABLY_PG_URL` when set (CI
 * starts one), else a throwaway cluster of the installed Debian server on
 * loopback, stopped afterwards. With neither, the tests are skipped and say why.
 */
export default async function setup(project: TestProject): Promise<() => void> {
  const fromEnv = process.env.DURABLY_PG_URL;
  if (fromEnv) {
    project.provide("pgUrl", fromEnv);
    project.provide("pgSkipReason", "");
    return () => undefined;
  }
  const server = systemTool("postgresql");
  if (!server.available) {
    project.provide("pgUrl", "");
    project.provide("pgSkipReason", `${server.reason}; ${server.enable}`);
    return () => undefined;
  }
  const cluster = await startCluster();
  project.provide("pgUrl", cluster.url);
  project.provide("pgSkipReason", "");
  return () => stopCluster(cluster.dir);
}
