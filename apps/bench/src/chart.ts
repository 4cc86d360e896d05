import type { BenchReport } from "./report.js";
import { int, ms, times } from "./table.js";

/*
 * The charts as SVG strings (no browser, no dependency): commits/s per case
 * next to its baseline on a log axis, and reopen time against log size on
 * log-log axes.
 */

const FONT = `font-family="system-ui, -apple-system, Segoe UI, sans-serif" font-size="12"`;
const OURS = "#2563eb";
const BASE = "#9ca3af";
const SERIES = ["#2563eb", "#93c5fd", "#16a34a", "#86efac"];

export function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A log10 axis over [min, max] widened to whole decades. */
function logScale(min: number, max: number, from: number, to: number) {
  const lo = Math.floor(Math.log10(Math.max(min, 1e-9)));
  const hi = Math.max(lo + 1, Math.ceil(Math.log10(Math.max(max, 1e-9))));
  const at = (v: number) =>
    from + ((Math.log10(Math.max(v, 10 ** lo)) - lo) / (hi - lo)) * (to - from);
  const ticks = Array.from({ length: hi - lo + 1 }, (_, i) => 10 ** (lo + i));
  return { at, ticks };
}

const tickLabel = (v: number) => (v >= 1000 ? `${v / 1000}k` : v >= 1 ? String(v) : v.toString());

export function commitsChart(report: BenchReport): string {
  const { pairs, cases } = report.commits;
  const label = new Map(cases.map((c) => [c.id, c.label]));
  const left = 380;
  const right = 900 - 90;
  const top = 50;
  const rowH = 34;
  const height = top + pairs.length * rowH + 40;
  const values = pairs.flatMap((p) => [p.perSecond, p.baselinePerSecond]).filter((v) => v > 0);
  const x = logScale(Math.min(...values), Math.max(...values), left, right);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="900" height="${height}" viewBox="0 0 900 ${height}" ${FONT}>`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="12" y="22" font-size="15" font-weight="600">Commits/s per case (blue) and its raw baseline in the same run (grey), log scale</text>`,
    `<text x="12" y="40" fill="#555">${escapeXml(`median of ${report.meta.rounds} interleaved rounds; ${report.meta.smoke ? "SMOKE RUN; " : ""}load average ${report.meta.loadavgStart.map((l) => l.toFixed(1)).join(" ")} at start`)}</text>`,
  ];
  for (const t of x.ticks)
    parts.push(
      `<line x1="${x.at(t).toFixed(1)}" y1="${top}" x2="${x.at(t).toFixed(1)}" y2="${height - 30}" stroke="#e5e7eb"/>`,
      `<text x="${x.at(t).toFixed(1)}" y="${height - 14}" text-anchor="middle" fill="#555">${tickLabel(t)}</text>`,
    );
  pairs.forEach((p, i) => {
    const y = top + i * rowH;
    const bar = (value: number, dy: number, fill: string, text: string) =>
      `<rect x="${left}" y="${y + dy}" width="${Math.max(1, x.at(value) - left).toFixed(1)}" height="12" fill="${fill}"/>` +
      `<text x="${(x.at(value) + 4).toFixed(1)}" y="${y + dy + 10}" fill="#333">${escapeXml(text)}</text>`;
    parts.push(
      `<text x="${left - 8}" y="${y + 12}" text-anchor="end">${escapeXml(label.get(p.caseId) ?? p.caseId)}</text>`,
      `<text x="${left - 8}" y="${y + 26}" text-anchor="end" fill="#777">${escapeXml(`vs ${p.baselineId}: ${times(p.ratio)}`)}</text>`,
      bar(p.perSecond, 2, OURS, int(p.perSecond)),
      bar(p.baselinePerSecond, 16, BASE, int(p.baselinePerSecond)),
    );
  });
  parts.push(`</svg>`);
  return parts.join("\n") + "\n";
}

export function reopenChart(report: BenchReport): string {
  const rows = report.reopen.rows;
  const width = 700;
  const height = 420;
  const [left, right, top, bottom] = [70, width - 200, 50, height - 50];
  const sizes = rows.map((r) => r.commits);
  const times_ = rows.flatMap((r) => [r.durablyMs, r.rawMs]);
  const x = logScale(Math.min(...sizes), Math.max(...sizes), left, right);
  const yScale = logScale(Math.min(...times_), Math.max(...times_), 0, 1);
  const y = (v: number) => bottom - yScale.at(v) * (bottom - top);
  const series = [
    { name: "JSONL reopen", backend: "jsonl", pick: (r: (typeof rows)[number]) => r.durablyMs },
    {
      name: "JSONL raw read + parse",
      backend: "jsonl",
      pick: (r: (typeof rows)[number]) => r.rawMs,
    },
    { name: "SQLite reopen", backend: "sqlite", pick: (r: (typeof rows)[number]) => r.durablyMs },
    {
      name: "SQLite raw open + SELECT *",
      backend: "sqlite",
      pick: (r: (typeof rows)[number]) => r.rawMs,
    },
  ];
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ${FONT}>`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="12" y="22" font-size="15" font-weight="600">Reopen time (ms) against log size (commits), log-log</text>`,
    `<text x="12" y="40" fill="#555">${escapeXml(`median of ${report.meta.reopenRounds} fresh child processes per point${report.meta.smoke ? "; SMOKE RUN" : ""}`)}</text>`,
  ];
  for (const t of x.ticks)
    parts.push(
      `<line x1="${x.at(t).toFixed(1)}" y1="${top}" x2="${x.at(t).toFixed(1)}" y2="${bottom}" stroke="#e5e7eb"/>`,
      `<text x="${x.at(t).toFixed(1)}" y="${bottom + 16}" text-anchor="middle" fill="#555">${tickLabel(t)}</text>`,
    );
  for (const t of yScale.ticks)
    parts.push(
      `<line x1="${left}" y1="${y(t).toFixed(1)}" x2="${right}" y2="${y(t).toFixed(1)}" stroke="#e5e7eb"/>`,
      `<text x="${left - 6}" y="${(y(t) + 4).toFixed(1)}" text-anchor="end" fill="#555">${tickLabel(t)}</text>`,
    );
  series.forEach((s, i) => {
    const points = rows
      .filter((r) => r.backend === s.backend)
      .sort((a, b) => a.commits - b.commits)
      .map((r) => [x.at(r.commits), y(s.pick(r)), s.pick(r)] as const);
    const color = SERIES[i] as string;
    const dash = i % 2 === 1 ? ` stroke-dasharray="5 4"` : "";
    parts.push(
      `<polyline fill="none" stroke="${color}" stroke-width="2"${dash} points="${points.map(([px, py]) => `${px.toFixed(1)},${py.toFixed(1)}`).join(" ")}"/>`,
      ...points.map(
        ([px, py, v]) =>
          `<circle cx="${px.toFixed(1)}" cy="${py.toFixed(1)}" r="3" fill="${color}"><title>${ms(v)} ms</title></circle>`,
      ),
      `<line x1="${right + 20}" y1="${top + 10 + i * 20}" x2="${right + 44}" y2="${top + 10 + i * 20}" stroke="${color}" stroke-width="2"${dash}/>`,
      `<text x="${right + 50}" y="${top + 14 + i * 20}">${escapeXml(s.name)}</text>`,
    );
  });
  parts.push(`</svg>`);
  return parts.join("\n") + "\n";
}
