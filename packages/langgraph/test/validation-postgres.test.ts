import { describe, inject, it } from "vitest";
import { postgresBackend } from "./support/backends.js";
import { validateOn } from "./support/validation.js";

const url = inject("pgUrl");
if (url) validateOn(postgresBackend(url));
else
  describe("DurablyCheckpointSaver on PostgreSQL", () => {
    it.skip(`LangGraph's validation suite (skipped: ${inject("pgSkipReason")})`, () => undefined);
  });
