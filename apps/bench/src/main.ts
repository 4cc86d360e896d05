/**
 * `pnpm bench` (turbo builds first, then `node dist/main.js` here), or from
 * sources: `node --conditions=@durably/source --import tsx src/main.ts`.
 * Flags: `--smoke` (or BENCH_SMOKE=1) for tiny counts, `--out <dir>` (or
 * BENCH_OUT) instead of `<repo>/bench-results`.
 */
import { configFrom } from "./config.js";
import { runBench, writeReport } from "./run.js";

const config = configFrom(process.argv.slice(2), process.env);
const report = await runBench(config, (line) => process.stderr.write(line + "\n"));
const text = writeReport(report, config.outDir);
process.stdout.write(text + "\n");
process.stderr.write(`wrote ${config.outDir}\n`);
