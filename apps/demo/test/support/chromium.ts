import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext } from "playwright-core";

/**
 * Chromium, found the way the repository's other browser test finds it:
 * `CHROMIUM_PATH`, else Debian's /usr/bin/chromium. Missing is a failure
 * that says how to install it, never a silent skip.
 */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export function requireChromium(): string {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `Chromium not found at ${CHROMIUM}: install it (apt-get install -y chromium) or set CHROMIUM_PATH`,
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
