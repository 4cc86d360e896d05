// The block `npm test` prints last: which suites did not run for want of a
// system tool, why, and the command that enables each. One block, so a
// skipped suite is never lost in the test output above it.

const RULE = "=".repeat(78);

/**
 * `statuses` come from prepareSystem. Returns the lines to print: a short
 * line when everything ran, else the block.
 */
export function formatSummary(statuses) {
  const missing = statuses.filter((s) => !s.available);
  if (missing.length === 0)
    return `npm test: no suite was skipped for a missing tool (system tools: ${statuses.map((s) => s.name).join(", ")}).`;
  const suites = missing.reduce((n, s) => n + s.neededBy.length, 0);
  const lines = [
    RULE,
    `npm test: ${suites} suite${suites === 1 ? "" : "s"} skipped, ${missing.length} system tool${missing.length === 1 ? "" : "s"} missing`,
  ];
  for (const status of missing) {
    lines.push("", `  ${status.name}: ${status.reason}`);
    for (const suite of status.neededBy) lines.push(`    skipped: ${suite}`);
    lines.push(`    enable:  ${status.enable}`);
  }
  lines.push(
    "",
    "No other suite was skipped; the exit code is the test run's, so a real failure still fails.",
    RULE,
  );
  return lines.join("\n");
}

/**
 * The exit code of `npm test`: the check run's own, so a real failure always
 * fails; with `requireAll`, a suite skipped for a missing tool fails a run
 * that otherwise passed. Returns the code and, when the skip decided it, why.
 */
export function finalExit(checkCode, statuses, requireAll) {
  const missing = statuses.filter((s) => !s.available);
  if (checkCode === 0 && requireAll && missing.length > 0)
    return {
      code: 1,
      why: "Failing: every suite must run here (--require-all or DURABLY_TEST_REQUIRE_ALL=1).",
    };
  return { code: checkCode };
}
