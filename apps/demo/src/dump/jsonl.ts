import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import type { Section } from "./section.js";

/** main.jsonl first, then document sidecars by id, then task sidecars by id, then anything else. */
function fileOrder(name: string): [number, number, string] {
  if (name === "main.jsonl") return [0, 0, name];
  const doc = /^doc-(\d+)\.jsonl$/.exec(name);
  if (doc) return [1, Number(doc[1]), name];
  const task = /^task-(\d+)\.jsonl$/.exec(name);
  if (task) return [2, Number(task[1]), name];
  return [3, 0, name];
}

function compareFiles(a: string, b: string): number {
  const [ga, na, sa] = fileOrder(a);
  const [gb, nb, sb] = fileOrder(b);
  return ga - gb || na - nb || (sa < sb ? -1 : sa > sb ? 1 : 0);
}

/** Splits a file into its lines; an unterminated last line is shown as such (a torn write). */
export function fileLines(text: string): string[] {
  const lines = text.split("\n");
  const last = lines.pop();
  if (last !== undefined && last !== "") lines.push(`${last}   ⟵ no newline: torn`);
  return lines;
}

/** Every file of a JSONL storage directory: a listing, then the lines of each `.jsonl` file. */
export async function dumpJsonl(dir: string): Promise<Section[]> {
  const names = (await readdir(dir)).sort(compareFiles);
  const listing: string[][] = [];
  const sections: Section[] = [];
  for (const name of names) {
    const info = await stat(join(dir, name));
    listing.push([name, String(info.size)]);
    if (info.isFile() && name.endsWith(".jsonl")) {
      sections.push({ title: name, lines: fileLines(await readFile(join(dir, name), "utf8")) });
    }
  }
  return [
    {
      title: `files in ${dir}`,
      table: {
        columns: [{ header: "file" }, { header: "bytes", align: "right" }],
        rows: listing,
      },
    },
    ...sections,
  ];
}
