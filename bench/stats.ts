/** Latency summary of one operation, from individually timed sequential calls. */
export interface OpStats {
  /** Number of timed calls. */
  count: number;
  /** Sum of the calls' durations in milliseconds. */
  totalMs: number;
  /** `count / totalMs` in calls per second: throughput of back-to-back sequential calls. */
  opsPerSec: number;
  /** Median latency in milliseconds. */
  p50Ms: number;
  /** 99th-percentile latency in milliseconds. */
  p99Ms: number;
}

/**
 * The `q`-quantile (0..1) of ascending `sorted` values by the nearest-rank method, so the result
 * is always a measured value (p99 of 100 samples is the 99th, not an interpolation).
 */
export function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1] ?? Number.NaN;
}

/** Summarises per-call durations (milliseconds) of one operation into count, ops/s, p50, p99. */
export function summarize(samplesMs: readonly number[]): OpStats {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const totalMs = sorted.reduce((sum, value) => sum + value, 0);
  return {
    count: sorted.length,
    totalMs,
    opsPerSec: totalMs > 0 ? (sorted.length * 1000) / totalMs : Number.NaN,
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
  };
}

/** Median of `values` (mean of the middle two for an even count); NaN for none. Used across rounds. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? Number.NaN) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

/** Runs `fn` and returns its duration in milliseconds, measured with `performance.now()`. */
export async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

/** Formats a number with a fixed number of decimals, or "-" when it is not finite. */
export function fixed(value: number, decimals: number): string {
  return Number.isFinite(value) ? value.toFixed(decimals) : "-";
}

/** Formats a byte count in kB/MB (1024-based) for tables. */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return "-";
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(2)} MB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1)} kB`;
  return `${bytes} B`;
}

/**
 * Renders a plain-text table: the first column left-aligned, the others right-aligned, a rule
 * under the header. Rows shorter than the header are padded with empty cells.
 */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((cell, column) => Math.max(cell.length, ...rows.map((row) => (row[column] ?? "").length)));
  const line = (cells: readonly string[]): string =>
    widths
      .map((width, column) => {
        const cell = cells[column] ?? "";
        return column === 0 ? cell.padEnd(width) : cell.padStart(width);
      })
      .join(" | ")
      .trimEnd();
  const rule = widths.map((width) => "-".repeat(width)).join("-+-");
  return [line(header), rule, ...rows.map(line)].join("\n");
}
