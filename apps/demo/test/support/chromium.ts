import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext } from "playwright-core";
import { systemTool } from "../../../../scripts/system-tools.mjs";

/**
 * Chromium, found the way the repository's other browser test finds it:
 * `systemTool("chromium")` (what `npm test` installed or probed:
 * `CHROMIUM_PATH`, else Debian's /usr/bin/chromium). Where there is none,
 * the suites that need it are skipped, with a warning giving the reason
 * and how to enable it.
 */
const installed = systemTool("chromium");
export const CHROMIUM = installed.available ? installed.path : undefined;
/** False where there is no Chromium: `describe.skipIf(!CHROMIUM_AVAILABLE)`. */
export const CHROMIUM_AVAILABLE = installed.available;
if (!installed.available)
  console.warn(
    `@durably/demo viewer in headless Chromium skipped: ${installed.reason}; ${installed.enable}`,
  );

export function requireChromium(): string {
  if (CHROMIUM === undefined)
    throw new Error(
      installed.available ? "Chromium has no path" : `${installed.reason}; ${installed.enable}`,
    );
  return CHROMIUM;
}

/** The flags every run uses: headless, no network of its own, nothing from a previous run. */
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export interface Chromium {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Real headless Chromium with a fresh profile directory, removed on close. */
export async function launchChromium(): Promise<Chromium> {
  const executablePath = requireChromium();
  const profile = await mkdtemp(join(tmpdir(), "durably-viewer-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1400, height: 1000 },
  });
  return {
    context,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
