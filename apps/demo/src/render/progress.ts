import type { Output } from "./output.js";

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/**
 * Runs `work` while a spinner with `label` turns on the terminal's last line.
 * Off a TTY nothing is drawn, so logs and pipes see only the real output.
 */
export async function withProgress<T>(
  out: Output,
  label: string,
  work: () => Promise<T>,
): Promise<T> {
  if (!out.interactive) return work();
  let frame = 0;
  const draw = (): void => {
    out.status(`${out.style.cyan(FRAMES[frame % FRAMES.length] ?? "")} ${out.style.dim(label)}`);
    frame += 1;
  };
  draw();
  const timer = setInterval(draw, 80);
  try {
    return await work();
  } finally {
    clearInterval(timer);
    out.status(undefined);
  }
}
