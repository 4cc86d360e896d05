import type { Output } from "./output.js";

export function heading(out: Output, text: string): void {
  out.line();
  out.line(out.style.bold(text));
  out.line(out.style.dim("═".repeat(Math.min(78, [...text].length))));
}

export function subheading(out: Output, text: string): void {
  out.line();
  out.line(out.style.cyan(text));
}
