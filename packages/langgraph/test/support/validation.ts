import { specTest } from "@langchain/langgraph-checkpoint-validation";
import { DurablyCheckpointSaver } from "../../src/index.js";
import type { Backend } from "./backends.js";

const places = new WeakMap<DurablyCheckpointSaver, string>();

/**
 * Runs LangGraph's own checkpointer validation suite, unchanged and
 * unfiltered, against `DurablyCheckpointSaver` over `backend`: every
 * checkpointer the suite asks for is a fresh storage.
 */
export function validateOn(backend: Backend): void {
  specTest({
    checkpointerName: `DurablyCheckpointSaver on ${backend.name}`,
    async createCheckpointer() {
      const place = backend.place();
      const saver = new DurablyCheckpointSaver(await backend.open(place));
      places.set(saver, place);
      return saver;
    },
    async destroyCheckpointer(saver) {
      await saver.close();
      const place = places.get(saver);
      if (place !== undefined) backend.remove(place);
    },
  });
}
