/** Text styling that degrades to plain text: colour only on a TTY and never when NO_COLOR is set. */
export interface Style {
  readonly enabled: boolean;
  bold(text: string): string;
  dim(text: string): string;
  green(text: string): string;
  red(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
}

/**
 * https://no-color.org: a present, non-empty NO_COLOR disables colour.
 * Pipes and files get plain text so the output diffs and greps cleanly.
 */
export function colourWanted(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  const noColor = env["NO_COLOR"];
  if (noColor !== undefined && noColor !== "") return false;
  return stream.isTTY === true;
}

function sgr(open: number, close: number): (text: string) => string {
  return (text) => `\u001b[${open}m${text}\u001b[${close}m`;
}

const plain = (text: string): string => text;

export function makeStyle(enabled: boolean): Style {
  if (!enabled) {
    return {
      enabled,
      bold: plain,
      dim: plain,
      green: plain,
      red: plain,
      yellow: plain,
      cyan: plain,
    };
  }
  return {
    enabled,
    bold: sgr(1, 22),
    dim: sgr(2, 22),
    green: sgr(32, 39),
    red: sgr(31, 39),
    yellow: sgr(33, 39),
    cyan: sgr(36, 39),
  };
}

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*m/g;

/** Width of the text as a terminal shows it: escape codes take no columns. */
export function visibleLength(text: string): number {
  return [...text.replace(ANSI, "")].length;
}
