export const BACKEND_NAMES = ["memory", "sqlite", "jsonl", "store", "postgres"] as const;
export type BackendName = (typeof BACKEND_NAMES)[number];

export function isBackendName(value: string): value is BackendName {
  return (BACKEND_NAMES as readonly string[]).includes(value);
}
