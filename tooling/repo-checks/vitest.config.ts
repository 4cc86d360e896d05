import { defineConfig, mergeConfig } from "vitest/config";
import shared from "../../vitest.shared.ts";

// Packing, installing from the registry and running tsc take minutes on a loaded machine.
export default mergeConfig(
  shared,
  defineConfig({ test: { testTimeout: 300_000, hookTimeout: 300_000 } }),
);
