import { defineConfig, mergeConfig } from "vitest/config";
import shared from "../../vitest.shared.ts";

// LangGraph's validation suite registers its cases through Vitest's globals.
export default mergeConfig(
  shared,
  defineConfig({
    test: { globals: true, globalSetup: ["./test/support/global-setup.ts"] },
  }),
);
