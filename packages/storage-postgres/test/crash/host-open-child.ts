import type { Storage } from "@durably/core";
import { openPostgresHost } from "../../src/index.js";
import { startNeighbours } from "../support/neighbours.js";

/**
 * How a crash child (and the parent checking after it) opens a session
 * through a host of its own that also runs neighbour sessions committing in
 * a loop, so the SIGKILL lands while the session's commits share rounds with
 * theirs. Closing the storage stops the neighbours and closes the host.
 */
export async function open(path: string): Promise<Storage> {
  const url = process.env.DURABLY_PG_URL;
  if (!url) throw new Error("DURABLY_PG_URL is not set in the crash child");
  const host = await openPostgresHost({ connectionString: url, maxConnections: 3 });
  const neighbours = startNeighbours(host, 3);
  try {
    const storage = await host.open(path);
    const close = storage.close.bind(storage);
    storage.close = async () => {
      await neighbours.stop();
      await close();
      await host.close();
    };
    return storage;
  } catch (error) {
    await neighbours.stop();
    await host.close();
    throw error;
  }
}
