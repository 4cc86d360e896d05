import {
  registerHarnessConformance,
  registerSessionConformance,
  registerStorageConformance,
  registerTaskConformance,
} from "@durably/contract-tests";
import { describe, expect, it } from "vitest";
import { backends } from "./backends.js";
import { open } from "./crash/open-child.js";
import { storeFactory } from "./storage-factory.js";

const api = { describe, it, expect };

for (const backend of backends) {
  const name = `StoreStorage on ${backend.name}`;
  const factory = storeFactory(backend);
  registerStorageConformance(api, name, factory);
  // The large-value case (over 500 MB through one store) on the on-disk backend only.
  registerSessionConformance(api, name, factory, {
    largeValues: backend.name === "classic-level",
  });
  registerTaskConformance(api, name, factory);
  registerHarnessConformance(api, name, {
    factory,
    persistent: backend.persistent,
    // The SIGKILL scenarios need a store a child process can open by path: LevelDB on disk.
    ...(backend.name === "classic-level"
      ? {
          crash: {
            childModule: new URL("./crash/open-child.ts", import.meta.url),
            open,
            nodeArgs: ["--conditions=@durably/source", "--import", "tsx"],
          },
        }
      : {}),
  });
}

// LevelDB closed and reopened after every commit: the caches, the next seq and the id
// high-water mark are rebuilt from the database each time, so one never written shows up.
const classicLevel = backends.find((b) => b.name === "classic-level");
if (classicLevel === undefined) throw new Error("the classic-level backend is missing");
registerStorageConformance(
  api,
  "StoreStorage on classic-level reopened after every commit",
  storeFactory(classicLevel, { reopenAfterEveryCommit: true }),
);
