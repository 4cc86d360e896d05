import { readFileSync } from "node:fs";
import path from "node:path";
import { ROOT } from "./repo.ts";

/**
 * A TypeScript block of a Markdown file tagged after its language:
 * ` ```ts example ` is a complete program (typechecked and run),
 * ` ```ts typecheck ` a complete module that needs a test runner (typechecked only).
 */
export interface CodeBlock {
  /** `packages/core/README.md:42`: the opening fence. */
  where: string;
  /** A file name for the block: `packages-core-README-42.ts`. */
  fileName: string;
  kind: "example" | "typecheck";
  code: string;
  /** The ` ```text output ` block right after an example: its exact standard output. */
  output?: string;
}

const FENCE = /^```(\S*)\s*(.*)$/;

export function codeBlocks(file: string): CodeBlock[] {
  const relative = path.relative(ROOT, file);
  const lines = readFileSync(file, "utf8").split("\n");
  const blocks: CodeBlock[] = [];
  let last: CodeBlock | undefined;
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i] as string);
    if (!open) {
      if ((lines[i] as string).trim() !== "") last = undefined;
      continue;
    }
    const [, language, info] = open;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i] !== "```"; i++) body.push(lines[i] as string);
    if (i >= lines.length) throw new Error(`${relative}:${start + 1}: code block never closed`);
    const tags = (info ?? "").split(/\s+/);
    if (language === "text" && tags.includes("output") && last !== undefined) {
      last.output = body.join("\n");
      last = undefined;
      continue;
    }
    last = undefined;
    if (language !== "ts" && language !== "typescript") continue;
    const kind = tags.includes("example")
      ? "example"
      : tags.includes("typecheck")
        ? "typecheck"
        : undefined;
    if (kind === undefined) continue;
    const block: CodeBlock = {
      where: `${relative}:${start + 1}`,
      fileName: `${relative.replace(/\.md$/, "").replace(/[^A-Za-z0-9]+/g, "-")}-${start + 1}.ts`,
      kind,
      code: `${body.join("\n")}\n`,
    };
    blocks.push(block);
    if (kind === "example") last = block;
  }
  return blocks;
}

/** Relative link targets of a Markdown file (`[text](./RULES.md#3)` gives `./RULES.md`). */
export function relativeLinks(file: string): string[] {
  const text = readFileSync(file, "utf8").replace(/```[\s\S]*?```/g, "");
  const links: string[] = [];
  for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = (match[1] as string).split("#")[0] as string;
    if (target === "" || /^[a-z][a-z+.-]*:/i.test(target)) continue;
    links.push(target);
  }
  return links;
}
