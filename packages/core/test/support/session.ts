import {
  defineDoc,
  defineDocFamily,
  Session,
  type Json,
  type SessionOptions,
} from "../../src/index.js";
import { FaultyStorage } from "./faulty-storage.js";
import { MemoryStorage } from "./memory.js";

export const Notes = defineDoc<{ text: string; items: number[] }>({
  kind: "test.notes",
  version: 1,
  scope: "conversation",
  initial: () => ({ text: "", items: [] }),
});

export const Settings = defineDoc<{ theme: string }>({
  kind: "test.settings",
  version: 1,
  scope: "session",
  initial: () => ({ theme: "light" }),
});

export const Slots = defineDocFamily<{ output: string }, "task", string>({
  kind: "test.slot",
  version: 1,
  scope: "task",
  initial: (seed) => ({ output: seed }),
});

export const Echo = {
  name: "test.echo",
  version: 1,
  initial: (input: Json) => ({ phase: "start", input }),
};

/** A session over a FaultyStorage over a real MemoryStorage. */
export async function openTest(
  options: SessionOptions = {},
): Promise<{ session: Session; storage: FaultyStorage }> {
  const storage = new FaultyStorage(new MemoryStorage());
  const session = await Session.open(storage, options);
  return { session, storage };
}
