import { describe, expect, it } from "vitest";
import { boundedOutputText, type OutputCut } from "../../src/index.js";
import { appendBounded, outputBound, utf8Length } from "../../src/harness/tool-output.js";

function feed(chunks: readonly string[], bound = { maxBytes: 50, maxLines: 3 }) {
  let output = "";
  let cut: OutputCut | undefined;
  for (const chunk of chunks) ({ output, cut } = appendBounded(output, cut, chunk, bound));
  return { output, cut };
}

describe("bounded tool output", () => {
  it("keeps everything while within the bound", () => {
    expect(feed(["a\n", "b\n"])).toEqual({ output: "a\nb\n", cut: undefined });
  });

  it("keeps the newest lines and counts what it cut", () => {
    const { output, cut } = feed(["1\n2\n", "3\n4\n", "5"]);
    expect(output).toBe("3\n4\n5");
    expect(cut).toEqual({ bytes: 4, lines: 2, chars: 4 });
    expect(boundedOutputText(output, cut)).toBe("[earlier output cut: 2 lines, 4 bytes]\n3\n4\n5");
  });

  it("cuts by bytes at a line start when one is kept, inside a long line otherwise", () => {
    const long = "x".repeat(30);
    const { output, cut } = feed([`${long}\n`, `${"y".repeat(30)}\n`], {
      maxBytes: 40,
      maxLines: 100,
    });
    expect(output).toBe(`${"y".repeat(30)}\n`);
    expect(cut).toEqual({ bytes: 31, lines: 1, chars: 31 });
    const one = feed(["z".repeat(100)], { maxBytes: 10, maxLines: 100 });
    expect(one.output).toBe("z".repeat(10));
    expect(one.cut).toEqual({ bytes: 90, lines: 0, chars: 90 });
  });

  it("counts UTF-8 bytes and never splits a surrogate pair", () => {
    expect(utf8Length("aé€😀")).toBe(1 + 2 + 3 + 4);
    const { output, cut } = feed(["😀😀😀"], { maxBytes: 6, maxLines: 10 });
    expect(output).toBe("😀");
    expect(cut).toEqual({ bytes: 8, lines: 0, chars: 4 });
    // Every byte is accounted for: what is kept plus what was cut is what came in.
    expect(utf8Length(output) + (cut?.bytes ?? 0)).toBe(utf8Length("😀😀😀"));
  });

  it("accounts for every character across many appends (the position a reader resumes from)", () => {
    const chunks = Array.from({ length: 500 }, (_, i) => `line ${i}\n`);
    const { output, cut } = feed(chunks, { maxBytes: 200, maxLines: 20 });
    expect(output.split("\n").length - 1).toBeLessThanOrEqual(20);
    expect(utf8Length(output)).toBeLessThanOrEqual(200);
    expect((cut?.chars ?? 0) + output.length).toBe(chunks.join("").length);
    expect(chunks.join("").endsWith(output)).toBe(true);
  });

  it("checks settings.toolOutput", () => {
    expect(outputBound(undefined)).toEqual({ maxBytes: 51_200, maxLines: 2_000 });
    expect(outputBound({ maxLines: 10 })).toEqual({ maxBytes: 51_200, maxLines: 10 });
    expect(() => outputBound({ maxBytes: 0 })).toThrow(
      "Harness.open: settings.toolOutput.maxBytes: must be a positive integer",
    );
    expect(() => outputBound({ lines: 3 })).toThrow(
      "Harness.open: settings.toolOutput.lines: not a tool output setting (maxBytes, maxLines)",
    );
    // A field given as undefined takes its default (an optional value passed through).
    expect(outputBound({ maxBytes: undefined, maxLines: 10 })).toEqual({
      maxBytes: 51_200,
      maxLines: 10,
    });
  });
});
