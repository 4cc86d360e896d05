/** Where `demo agent` on a real model keeps its SQLite file unless --dir says otherwise. */
export const DEFAULT_LIVE_DIR = "durably-agent";
