import { describe } from "vitest";
import { deltaChannelHistoryTests, validate } from "@langchain/langgraph-checkpoint-validation";
import { PostgresCheckpointSaver } from "../../src/checkpoint/postgres-saver.js";
import type { Database } from "../../src/db/types.js";
import { BACKENDS, freshMigratedSchema, openBackend } from "../helpers/databases.js";

// The official LangGraph conformance suite, run in full on each backend. The checkpointer name
// is our own, so none of the suite's per-saver skips apply.
for (const backend of BACKENDS) {
  let owner: Database;
  const drops = new Map<PostgresCheckpointSaver, () => Promise<void>>();
  const initializer = {
    checkpointerName: `devmind-postgres-checkpoint-saver (${backend})`,
    beforeAllTimeout: 60_000,
    async beforeAll() {
      owner = await openBackend(backend);
    },
    async afterAll() {
      await owner.close();
    },
    async createCheckpointer() {
      const { db, drop } = await freshMigratedSchema(owner);
      const saver = new PostgresCheckpointSaver(db);
      drops.set(saver, drop);
      return saver;
    },
    async destroyCheckpointer(saver: PostgresCheckpointSaver) {
      await drops.get(saver)?.();
      drops.delete(saver);
    },
  };
  describe(`conformance on ${backend}`, () => {
    validate(initializer);
    deltaChannelHistoryTests(initializer);
  });
}
