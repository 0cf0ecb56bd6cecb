import { Registry } from "prom-client";
import { expect, it } from "vitest";
import { openDatabase } from "../../src/db/open-database.js";
import { countDatabaseFaults } from "../../src/operations/metrics/observed-database.js";
import { createRunMetrics } from "../../src/operations/metrics/run-metrics.js";
import { describeWithPostgres } from "../helpers/databases.js";
import { createFaultDatabase } from "../helpers/fault-database.js";
import { waitUntil } from "../helpers/waits.js";

describeWithPostgres("database faults in the metrics (PostgreSQL)", () => {
  it("a statement cut off by a terminated backend counts as an unreachable fault; a bad statement does not count", async () => {
    const fault = await createFaultDatabase();
    const db = await openDatabase({ url: fault.url, schema: "public" });
    try {
      const metrics = createRunMetrics(new Registry());
      const observed = countDatabaseFaults(db, metrics);
      expect((await observed.query<{ one: number }>("SELECT 1 AS one")).rows[0]?.one).toBe(1);
      await expect(observed.query("SELECT * FROM no_such_table")).rejects.toThrow(/no_such_table/);
      const sleeping = observed.query("SELECT pg_sleep(30)").then(() => "finished", () => "failed");
      await waitUntil("the sleeping statement on a backend", async () => (await fault.admin("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND query LIKE 'SELECT pg_sleep%'", [fault.name])).rows[0]?.n === 1, 20_000);
      await fault.killBackends();
      expect(await sleeping).toBe("failed");
      const counted = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === "devmind_database_faults_total")?.values ?? [];
      expect(counted.map((v) => [v.labels["kind"], v.value])).toEqual([["unreachable", 1]]);
    } finally {
      await db.close();
      await fault.drop();
    }
  }, 60_000);
});
