import type { Json } from "@durably/core";

/**
 * Named gates a scenario opens to move a task on: a phase holds at a gate
 * until the scenario opens it (with a value) or the task's signal aborts.
 * Names are made unique per scenario run with `gateName`, so scenarios of
 * several backends in one process never share a gate.
 */
interface Gate {
  readonly promise: Promise<Json>;
  open(value: Json): void;
}

const gates = new Map<string, Gate>();
let counter = 0;

function gate(name: string): Gate {
  let found = gates.get(name);
  if (!found) {
    let open!: (value: Json) => void;
    const promise = new Promise<Json>((resolve) => (open = resolve));
    found = { promise, open };
    gates.set(name, found);
  }
  return found;
}

/** A gate name no other scenario run uses. */
export function gateName(label: string): string {
  counter += 1;
  return `${label}#${counter}`;
}

/** Opens a gate: every task holding at it (now or later) moves on with `value`. */
export function openGate(name: string, value: Json = null): void {
  gate(name).open(value);
}

/** Resolves with the gate's value once it is opened; rejects with the signal's reason if it aborts first. */
export function holdAt(name: string, signal: AbortSignal): Promise<Json> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<Json>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener("abort", onAbort, { once: true });
    void gate(name).promise.then((value) => {
      signal.removeEventListener("abort", onAbort);
      resolve(value);
    });
  });
}
