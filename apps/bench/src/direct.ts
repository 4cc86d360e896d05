import type { EntryId, StorageWrite } from "@durably/core";
import type { Backend } from "./backends.js";
import { concurrentLoops, type CommitCase } from "./harness.js";
import type { Scratch } from "./paths.js";
import { seedRawWriters, stepWrites } from "./workload.js";

/**
 * `storage.commit` called directly, without the Session: `perCall` batches
 * per call, as the Session's group commit would send them. Between the raw
 * baseline and the Session case it tells the adapter's cost from the kernel's.
 */
export function directCase(backend: Backend, perCall: number, scratch: Scratch): CommitCase {
  return {
    id: `direct/${backend.id}/${perCall}`,
    family: "direct",
    label: `storage.commit direct, ${backend.label}, ${perCall} batch${perCall === 1 ? "" : "es"} per call`,
    backend: backend.id,
    writers: perCall,
    async open() {
      const storage = await backend.open(scratch.path(`direct-${backend.id}`));
      const writers = await seedRawWriters(storage, perCall);
      let n = 0;
      return {
        run: (deadline) =>
          concurrentLoops(
            1,
            deadline,
            async () => {
              const batches: StorageWrite[][] = [];
              for (const writer of writers)
                batches.push(stepWrites(writer, (await storage.mintId()) as EntryId, ++n));
              const result = await storage.commit(batches, () => undefined);
              if (result.refused) throw result.refused;
            },
            perCall,
          ),
        close: () => storage.close(),
      };
    },
  };
}
