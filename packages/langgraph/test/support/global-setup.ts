import type { TestProject } from "vitest/node";
import {
  findServerBin,
  startCluster,
  stopCluster,
} from "../../../storage-postgres/scripts/throwaway-cluster.mjs";

declare module "vitest" {
  export interface ProvidedContext {
    /** The PostgreSQL server the tests use, or "" when none is reachable. */
    pgUrl: string;
    /** Why the PostgreSQL cases are skipped, when they are. */
    pgSkipReason: string;
  }
}

/**
 * The PostgreSQL server for this run, the way @durably/storage-postgres gets
 * one: `DURABLY_PG_URL` when set (CI starts a cluster), else a throwaway
 * cluster of the installed Debian server (its script), stopped afterwards.
 */
export default async function setup(project: TestProject): Promise<() => void> {
  const fromEnv = process.env.DURABLY_PG_URL;
  if (fromEnv) {
    project.provide("pgUrl", fromEnv);
    project.provide("pgSkipReason", "");
    return () => undefined;
  }
  if (findServerBin() === undefined) {
    project.provide("pgUrl", "");
    project.provide(
      "pgSkipReason",
      "no PostgreSQL server: set DURABLY_PG_URL, or install one (apt-get install postgresql)",
    );
    return () => undefined;
  }
  const cluster = await startCluster();
  project.provide("pgUrl", cluster.url);
  project.provide("pgSkipReason", "");
  return () => stopCluster(cluster.dir);
}
