import { tourBackends } from "../backends.js";
import { reportExperiment } from "../experiment-report.js";
import { PG_SKIPPED } from "../postgres-config.js";
import { withProgress } from "../render/progress.js";
import { backendDir, experimentOn, type BackendRun } from "../run-backends.js";
import type { TourStep } from "./context.js";

export const experimentStep: TourStep = {
  title: "1. The experiment on every backend",
  async run(context) {
    const { out } = context;
    out.line(
      "Create a conversation, then two saves; each appends a note entry and changes the Notes document.",
    );
    out.line(
      "Same code, through the Session, on each backend; then read back through the Storage port.",
    );
    const backends = tourBackends();
    if (!backends.some((b) => b.name === "postgres")) out.line(out.style.yellow(PG_SKIPPED));
    out.line();
    const runs: BackendRun[] = [];
    for (const backend of backends) {
      runs.push(
        await withProgress(out, `experiment on ${backend.title}`, () =>
          experimentOn(backend, backendDir(context.root, "experiment", backend)),
        ),
      );
    }
    context.experiment = runs;
    reportExperiment(out, context.checks, runs);
  },
};
