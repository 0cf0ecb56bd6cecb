import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { createRunMetrics } from "../../src/operations/metrics/run-metrics.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "../..");

interface Panel {
  title: string;
  targets?: { expr: string }[];
}

/** Every series name devmind exposes: counters and gauges as named, histograms with _bucket, _sum and _count. */
async function exposedNames(): Promise<Set<string>> {
  const metrics = createRunMetrics(new Registry());
  const names = new Set<string>();
  for (const metric of await metrics.registry.getMetricsAsJSON()) {
    if (String(metric.type) === "histogram") for (const suffix of ["_bucket", "_sum", "_count"]) names.add(`${metric.name}${suffix}`);
    else names.add(metric.name);
  }
  return names;
}

describe("docs/grafana-dashboard.json", () => {
  it("parses, and every query names only metrics devmind exposes", async () => {
    const dashboard = JSON.parse(readFileSync(join(root, "docs/grafana-dashboard.json"), "utf8")) as { panels: Panel[] };
    const names = await exposedNames();
    const exprs = dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => ({ panel: panel.title, expr: target.expr })));
    expect(exprs.length).toBeGreaterThan(10);
    const unknown = exprs.flatMap(({ panel, expr }) => [...expr.matchAll(/\b(devmind_[a-z0-9_]+)/g)].map((m) => m[1] as string).filter((name) => !names.has(name)).map((name) => `${panel}: ${name}`));
    expect(unknown).toEqual([]);
    // every query names at least one of them
    expect(exprs.filter(({ expr }) => !/\bdevmind_/.test(expr))).toEqual([]);
    // the panels the issue asks for
    const titles = dashboard.panels.map((panel) => panel.title.toLowerCase()).join(" | ");
    for (const topic of ["throughput", "latency", "oldest pending", "waiting", "faults"]) expect(titles).toContain(topic);
  });

  it("the check would catch a misspelt metric", async () => {
    const names = await exposedNames();
    expect(names.has("devmind_runs_ended_total")).toBe(true);
    expect(names.has("devmind_run_duration_seconds_bucket")).toBe(true);
    expect(names.has("devmind_run_ended_total")).toBe(false);
  });
});
