import { readdir, readFile } from "node:fs/promises";
import { extname } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The page's files: plain HTML, CSS and JavaScript modules, served as they
 * are (no build step). They live in src/serve/public; the path is the same
 * from src/serve (tsx) and dist/serve (built), so both find them.
 */
export const PUBLIC_DIR = fileURLToPath(new URL("../../src/serve/public/", import.meta.url));

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".svg": "image/svg+xml",
};

export interface StaticFile {
  type: string;
  body: Buffer;
}

/** Loads every servable file once; a request can name only these (no path from the URL touches the disk). */
export async function loadStaticFiles(dir = PUBLIC_DIR): Promise<Map<string, StaticFile>> {
  const files = new Map<string, StaticFile>();
  for (const name of await readdir(dir)) {
    const type = TYPES[extname(name)];
    if (type === undefined) continue;
    files.set(name, { type, body: await readFile(`${dir}${name}`) });
  }
  if (!files.has("index.html")) throw new Error(`${dir}: index.html is missing`);
  return files;
}
