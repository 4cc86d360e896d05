import type { Storage } from "@durably/core";
import { openPostgresStorage } from "../../src/index.js";

/**
 * How a crash child opens this backend. The shared suites name a storage by
 * a fresh temporary path; here that path is the session key, in the server
 * the parent test process exported as DURABLY_PG_URL.
 */
export async function open(path: string): Promise<Storage> {
  const url = process.env.DURABLY_PG_URL;
  if (!url) throw new Error("DURABLY_PG_URL is not set in the crash child");
  return openPostgresStorage({ connectionString: url, session: path, poolConfig: { max: 2 } });
}
