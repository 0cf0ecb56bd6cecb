/**
 * Orders test files so the long ones start first. With two workers, a long file that starts last
 * runs alone at the end and the run takes as long as it plus everything before it; started first,
 * it overlaps the short files. Vitest's own order (the durations of an earlier run, else file
 * size) knows nothing on a fresh clone, where the quick-start test — a small file that runs
 * `npm install` — would go last.
 */
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Files known to take longest (child processes, lease expiries, database faults, chaos), longest
 * first: the larger of two clean `.ci/run` tables of 2026-12-01 (after the CLI's bundle), with the
 * files of 2026-12-02 (PgBouncer, failover, auth fuzz, the page for any graph) placed by their
 * single-file times.
 */
const SLOW_FILES = [
  "test/int/cli-graphs.int.test.ts",
  "test/int/runtime-recovery.int.test.ts",
  "test/int/db-faults.int.test.ts",
  "test/int/quickstart.int.test.ts",
  "test/int/cli-dockerfile.int.test.ts",
  "test/int/crons.int.test.ts",
  "test/int/cli-run.int.test.ts",
  "test/int/pgbouncer.int.test.ts",
  "test/int/db-faults-processes.int.test.ts",
  "test/int/server-auth-fuzz.int.test.ts",
  "test/int/web-any-graph.int.test.ts",
  "test/int/pg-failover.int.test.ts",
  "test/int/cli-worker.int.test.ts",
  "test/int/web-page.int.test.ts",
  "test/int/checkpoint-conformance.int.test.ts",
  "test/int/server-graphs.int.test.ts",
  "test/int/server-langgraph.int.test.ts",
  "test/int/graph-durability.int.test.ts",
  "test/int/chaos.int.test.ts",
  "test/int/db-faults-tools.int.test.ts",
  "test/int/cli-errors.int.test.ts",
  "test/int/hostile-http.int.test.ts",
  "test/int/cli-logging.int.test.ts",
  "test/int/store.int.test.ts",
  "test/int/run-stops.int.test.ts",
  "test/int/pglite-init.int.test.ts",
  "test/int/cli-migrate.int.test.ts",
  "test/int/cli-crons.int.test.ts",
  "test/int/graphs-loading.int.test.ts",
  "test/int/security-http.int.test.ts",
  "test/int/web-graph-page.int.test.ts",
  "test/int/database.int.test.ts",
  "test/int/cross-process.int.test.ts",
  "test/int/agent-durability.int.test.ts",
];

/** Vitest's order, with the known slow files moved to the front in SLOW_FILES order. */
export default class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification): number => {
      const index = SLOW_FILES.findIndex((slow) => file.moduleId.endsWith(`/${slow}`));
      return index === -1 ? SLOW_FILES.length : index;
    };
    return sorted
      .map((file, position) => ({ file, position }))
      .sort((a, b) => rank(a.file) - rank(b.file) || a.position - b.position)
      .map(({ file }) => file);
  }
}
