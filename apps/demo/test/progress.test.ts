import { describe, expect, it } from "vitest";
import { streamOutput } from "../src/render/output.ts";
import { withProgress } from "../src/render/progress.ts";

function sink(isTTY: boolean) {
  const chunks: string[] = [];
  return { isTTY, chunks, write: (chunk: string) => chunks.push(chunk) };
}

describe("withProgress", () => {
  it("draws nothing when stdout is not a terminal", async () => {
    const stream = sink(false);
    const out = streamOutput(stream, {});
    expect(await withProgress(out, "working", () => Promise.resolve(42))).toBe(42);
    out.line("done");
    expect(stream.chunks).toEqual(["done\n"]);
  });

  it("on a terminal, shows the label and clears it before the next line, also when the work fails", async () => {
    const stream = sink(true);
    const out = streamOutput(stream, { NO_COLOR: "1" });
    await expect(
      withProgress(out, "working", () => Promise.reject(new Error("boom"))),
    ).rejects.toThrow("boom");
    out.line("next");
    const text = stream.chunks.join("");
    expect(text).toContain("⠋ working");
    expect(text.endsWith("⠋ working\r\u001b[2Knext\n")).toBe(true);
    expect(text).not.toContain("\u001b[3"); // NO_COLOR: no colour codes, only the line clear
  });
});
