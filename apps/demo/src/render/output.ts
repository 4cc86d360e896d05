import { colourWanted, makeStyle, type Style } from "./style.js";

/** Where the demo writes: lines to read, a style, and whether a live progress line makes sense. */
export interface Output {
  readonly style: Style;
  /** True when stdout is a terminal: progress indicators are drawn only then. */
  readonly interactive: boolean;
  line(text?: string): void;
  lines(texts: readonly string[]): void;
  /** Rewrites the current terminal line (progress); a no-op when not interactive. */
  status(text: string | undefined): void;
}

interface Sink {
  isTTY?: boolean;
  write(chunk: string): unknown;
}

export function streamOutput(stream: Sink = process.stdout, env = process.env): Output {
  const interactive = stream.isTTY === true;
  let statusShown = false;
  const clearStatus = (): void => {
    if (statusShown) stream.write("\r\u001b[2K");
    statusShown = false;
  };
  return {
    style: makeStyle(colourWanted(stream, env)),
    interactive,
    line(text = "") {
      clearStatus();
      stream.write(text + "\n");
    },
    lines(texts) {
      clearStatus();
      for (const text of texts) stream.write(text + "\n");
    },
    status(text) {
      if (!interactive) return;
      clearStatus();
      if (text !== undefined) {
        stream.write(text);
        statusShown = true;
      }
    },
  };
}

/** Collects plain lines in memory (tests, and nested runs whose output is reprinted). */
export function memoryOutput(): Output & { readonly text: string[] } {
  const text: string[] = [];
  return {
    style: makeStyle(false),
    interactive: false,
    text,
    line(line = "") {
      text.push(line);
    },
    lines(lines) {
      text.push(...lines);
    },
    status() {},
  };
}
