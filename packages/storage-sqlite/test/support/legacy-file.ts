/** The size of the ledger workload in the schema-version-3 fixture (`test/fixtures/v3-main.sqlite`). */
export const LEGACY_COMMITS = 120;
export const LEGACY_FORK_AT = 60;
