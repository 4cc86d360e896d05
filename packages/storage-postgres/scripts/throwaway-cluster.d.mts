/** The newest installed PostgreSQL server's bin directory (or DURABLY_PG_BIN), or undefined. */
export function findServerBin(): string | undefined;
/** Starts a throwaway cluster on a free loopback port in a temporary directory. */
export function startCluster(): Promise<{ url: string; dir: string; port: number }>;
/** Stops the cluster started in `dir` and deletes the directory. */
export function stopCluster(dir: string): void;
