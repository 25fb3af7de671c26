// deno-lint-ignore-file no-console
/**
 * What the benchmarks print: markdown tables and prose already formatted as `deno fmt` formats
 * them, the runtime suite's row shape and its report (`bench/runtime.md`), and progress lines
 * on stderr.
 *
 * @module
 */

/** `fmt.lineWidth` in deno.json: the reports must already be formatted. */
const LINE_WIDTH = 100;

/** Row groups of the runtime suite, one file each, in report order. */
export type Group = "cold" | "calls" | "peer" | "bash" | "memory" | "agent" | "mcp" | "live";

/** One benchmark row. */
export interface Row {
  /** Stable id (`cold_start`, `read_calls`, ...). */
  readonly id: string;
  readonly group: Group;
  /** What was measured, for people. */
  readonly name: string;
  /** Unit of `ours` and `comparison`: `ms`, `ms/call`, `calls/s`, `MiB`, `ms/iteration`. */
  readonly unit: string;
  /** Our figure; null when it could not be measured (see `note`). */
  readonly ours: number | null;
  /** The comparison's figure. */
  readonly comparison: number | null;
  /** What the comparison is. */
  readonly "comparison_name": string;
  /** Our cost over the comparison's: above 1 we are slower or bigger. */
  readonly ratio: number | null;
  /** The target, as text (`<= 1.5x`, `>= 20000 calls/s`, `< 150 MiB`, `-`). */
  readonly target: string;
  /** Whether the target is met; null without a target or a figure. */
  readonly "target_met": boolean | null;
  /** Details: sizes, what ran, why a figure is missing. */
  readonly note?: string;
}

/** A per-layer profile of one row. */
export interface Breakdown {
  readonly title: string;
  /** Unit of `value`. */
  readonly unit: string;
  readonly rows: ReadonlyArray<{ readonly name: string; readonly value: number | null }>;
  /** What the figures say, for people. */
  readonly note?: string;
}

/** A progress line on stderr (stdout carries the report). */
export function log(message: string): void {
  console.error(message);
}

/** `n` rounded to `digits` decimals. */
export function round(n: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

/** A markdown table already aligned the way `deno fmt` aligns it. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(3, h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}
/** Greedy wrap at the project's line width, as `deno fmt` wraps prose (code spans whole). */
export function wrap(text: string, indent = ""): string {
  const words = text.match(/(?:`[^`]*`|[^\s`])+/g) ?? [];
  const lines: string[] = [];
  let line = "";
  for (const word of words) {
    const next = line === "" ? word : `${line} ${word}`;
    if (line !== "" && (lines.length === 0 ? "" : indent).length + next.length > LINE_WIDTH) {
      lines.push(line);
      line = word;
    } else line = next;
  }
  if (line !== "") lines.push(line);
  return lines.map((l, i) => (i === 0 ? l : indent + l)).join("\n");
}

function figure(n: number | null, unit: string): string {
  if (n === null) return "-";
  const digits = unit === "calls/s" ? 0 : n < 10 ? 2 : 1;
  return `${n.toFixed(digits)} ${unit}`;
}

function cell(text: string): string {
  return text.replaceAll("|", "\\|");
}

/** The markdown report, already formatted as `deno fmt` formats it. */
export function report(
  rows: readonly Row[],
  breakdowns: readonly Breakdown[],
  meta: Record<string, string | number | boolean>,
): string {
  const body = rows.map((r) => [
    cell(r.name),
    figure(r.ours, r.unit),
    figure(r.comparison, r.unit),
    r.ratio === null ? "-" : `${r.ratio.toFixed(2)}x`,
    cell(r.target),
    r.target_met === null ? "-" : r.target_met ? "ok" : "MISS",
  ]);
  const out = [
    "# runtime benchmark",
    "",
    wrap(
      `Produced by \`${meta.command}\` on ${meta.date}: ${meta.deno}, ${meta.cpus} CPUs. Each ` +
        `figure is the best of ${meta.runs} run(s) after a warm-up round, the contenders of a ` +
        "row interleaved. The ratio is our cost over the comparison's (time, memory, or " +
        "inverse throughput): above 1.00x we are slower or bigger.",
    ),
    "",
    table(["row", "ours", "comparison", "ratio", "target", "met"], body),
    "",
    "Comparisons and details:",
    "",
    ...rows.map((r) =>
      wrap(
        `- \`${r.id}\`: vs ${r.comparison_name}${r.note === undefined ? "" : `; ${r.note}`}`,
        "  ",
      )
    ),
  ];
  for (const b of breakdowns) {
    out.push(
      "",
      `## ${b.title}`,
      "",
      table(
        ["what", b.unit],
        b.rows.map((r) => [cell(r.name), r.value === null ? "-" : `${r.value}`]),
      ),
    );
    if (b.note !== undefined) out.push("", wrap(b.note));
  }
  out.push("");
  return out.join("\n");
}
