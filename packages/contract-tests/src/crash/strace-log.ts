/**
 * Reads an strace log written with `-f -y -o <file>`: one call per line,
 * prefixed with the thread id; a call interrupted by another thread's output
 * is split into `<unfinished ...>` and `<... name resumed>` lines.
 */

/** Syscalls whose string arguments are file paths (for the others, a string is a data buffer). */
const PATH_ARGUMENT_SYSCALLS = new Set([
  "open",
  "openat",
  "creat",
  "rename",
  "renameat",
  "renameat2",
  "link",
  "linkat",
  "unlink",
  "unlinkat",
  "mkdir",
  "mkdirat",
  "rmdir",
  "truncate",
]);

export interface TracedCall {
  /** Order in which the calls entered the kernel (the order of their first lines). */
  position: number;
  tid: number;
  syscall: string;
  /** Files the call names: path arguments and the paths strace decoded for its descriptors. */
  paths: string[];
  /** The return part, e.g. `-1 EIO (Input/output error) (INJECTED)`; empty if strace never saw the return. */
  result: string;
  injected: boolean;
  /** First string argument (a write's buffer, unescaped, as long as strace printed it). */
  firstString: string | undefined;
  /** The call as strace wrote it (both halves of a split call joined), for failure messages. */
  text: string;
}

const LINE = /^(\d+)\s+(.*)$/;
const ENTRY = /^([a-z_][a-z0-9_]*)\((.*)$/;
const RESUMED = /^<\.\.\. ([a-z_][a-z0-9_]*) resumed>(.*)$/;
const DECODED_FD = /<(\/[^<>]*?)(?: \(deleted\))?>/g;
const STRING = /"((?:[^"\\]|\\.)*)"/g;

function unescapeC(text: string): string {
  return text.replace(/\\(n|t|\\|"|x[0-9a-fA-F]{2}|[0-7]{1,3})/g, (_all, code: string) => {
    if (code === "n") return "\n";
    if (code === "t") return "\t";
    if (code === "\\" || code === '"') return code;
    if (code.startsWith("x")) return String.fromCharCode(parseInt(code.slice(1), 16));
    return String.fromCharCode(parseInt(code, 8));
  });
}

function describeArguments(
  syscall: string,
  args: string,
): { paths: string[]; firstString?: string } {
  const paths: string[] = [];
  for (const match of args.matchAll(DECODED_FD)) if (match[1] !== undefined) paths.push(match[1]);
  let firstString: string | undefined;
  for (const match of args.matchAll(STRING)) {
    const text = unescapeC(match[1] ?? "");
    firstString ??= text;
    if (PATH_ARGUMENT_SYSCALLS.has(syscall) && text.startsWith("/")) paths.push(text);
  }
  return firstString === undefined ? { paths } : { paths, firstString };
}

function resultOf(text: string): string {
  const at = text.lastIndexOf(") = ");
  return at < 0 ? "" : text.slice(at + 4).trim();
}

/** Every call in the log, in entry order. Lines that are not calls (signals, exits) are skipped. */
export function parseStraceLog(log: string): TracedCall[] {
  const calls: TracedCall[] = [];
  const pending = new Map<number, { call: TracedCall; args: string }>();
  for (const line of log.split("\n")) {
    const head = LINE.exec(line);
    if (head === null) continue;
    const tid = Number(head[1]);
    const rest = head[2] ?? "";
    const resumed = RESUMED.exec(rest);
    if (resumed !== null) {
      const open = pending.get(tid);
      if (open === undefined || open.call.syscall !== resumed[1]) continue;
      pending.delete(tid);
      const whole = `${open.args}${resumed[2] ?? ""}`;
      const described = describeArguments(open.call.syscall, whole);
      open.call.paths = described.paths;
      open.call.firstString = described.firstString;
      open.call.result = resultOf(whole);
      open.call.injected = whole.trimEnd().endsWith("(INJECTED)");
      open.call.text = `${open.call.syscall}(${whole}`;
      continue;
    }
    const entry = ENTRY.exec(rest);
    if (entry === null) continue;
    const syscall = entry[1] ?? "";
    const args = entry[2] ?? "";
    const call: TracedCall = {
      position: calls.length,
      tid,
      syscall,
      paths: [],
      result: "",
      injected: false,
      firstString: undefined,
      text: `${syscall}(${args}`,
    };
    calls.push(call);
    if (args.endsWith("<unfinished ...>")) {
      pending.set(tid, { call, args: args.slice(0, -"<unfinished ...>".length) });
      continue;
    }
    const described = describeArguments(syscall, args);
    call.paths = described.paths;
    call.firstString = described.firstString;
    call.result = resultOf(args);
    call.injected = args.trimEnd().endsWith("(INJECTED)");
  }
  // A call still pending never returned (the process ended in it): keep what its entry said.
  for (const { call, args } of pending.values()) {
    const described = describeArguments(call.syscall, args);
    call.paths = described.paths;
    call.firstString = described.firstString;
  }
  return calls;
}

/** Where in the child's life a call happened, from the child's phase markers. */
export type Phase =
  | { kind: "starting" }
  | { kind: "open" }
  | { kind: "commit"; attempt: number }
  /** After the open (`after` 0) or after attempt `after` settled, before the next phase. */
  | { kind: "between"; after: number }
  | { kind: "close" }
  | { kind: "exiting" };

export function describePhase(phase: Phase): string {
  switch (phase.kind) {
    case "starting":
      return "before the storage was opened";
    case "open":
      return "while the storage was opening";
    case "commit":
      return `during commit attempt ${phase.attempt}`;
    case "between":
      return phase.after === 0
        ? "after open, before the first commit"
        : `after commit attempt ${phase.after} settled, before the next operation`;
    case "close":
      return "while the storage was closing";
    case "exiting":
      return "after close";
  }
}

function phaseAfterMarker(marker: string, current: Phase): Phase {
  if (marker === "O") return { kind: "open" };
  if (marker === "o") return { kind: "between", after: 0 };
  if (marker === "C") return { kind: "close" };
  if (marker === "c") return { kind: "exiting" };
  const attempt = Number(marker.slice(1));
  if (marker.startsWith("B") && Number.isSafeInteger(attempt)) return { kind: "commit", attempt };
  if (marker.startsWith("E") && Number.isSafeInteger(attempt))
    return { kind: "between", after: attempt };
  return current;
}

export interface PlacedCall extends TracedCall {
  phase: Phase;
}

/**
 * Splits the log into the child's marker writes and the other calls, each
 * placed in the phase the markers before it opened. A call belongs to the
 * phase in which it entered the kernel.
 */
export function placeCalls(
  calls: readonly TracedCall[],
  markerPath: string,
): {
  markers: string[];
  calls: PlacedCall[];
} {
  const markers: string[] = [];
  const placed: PlacedCall[] = [];
  let phase: Phase = { kind: "starting" };
  for (const call of calls) {
    const isMarker =
      (call.syscall === "write" || call.syscall === "pwrite64") && call.paths[0] === markerPath;
    if (isMarker) {
      const marker = (call.firstString ?? "").trim();
      markers.push(marker);
      phase = phaseAfterMarker(marker, phase);
      continue;
    }
    placed.push({ ...call, phase });
  }
  return { markers, calls: placed };
}
