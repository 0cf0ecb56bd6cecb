import { readFileSync } from "node:fs";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresCheckpointSaver } from "../../src/checkpoint/postgres-saver.js";
import { migrate } from "../../src/db/migrate.js";
import { readMigrationFiles } from "../../src/db/migration-files.js";
import { withSchema } from "../../src/db/schema-view.js";
import type { Database } from "../../src/db/types.js";
import { BACKENDS, dropSchema, freshSchemaName, openBackend } from "../helpers/databases.js";

// Stored state carries a version: rows written at migration 0001 must still load after every
// later migration. The fixture was produced by the saver at 0001 (see its header).
const FIXTURE = readFileSync(new URL("../fixtures/checkpoints-0001.sql", import.meta.url), "utf8");

describe.each(BACKENDS)("checkpoints written at migration 0001, on %s", (backend) => {
  let owner: Database;
  let db: Database;
  beforeAll(async () => {
    owner = await openBackend(backend);
    db = withSchema(owner, freshSchemaName("fx"));
    const files = readMigrationFiles();
    await migrate(db, { files: files.filter((file) => file.version <= 1) });
    for (const statement of FIXTURE.split("\n").filter((line) => line.startsWith("INSERT"))) {
      await db.query(statement.replaceAll("{schema}", `"${db.schema}"`));
    }
    await migrate(db);
  });
  afterAll(async () => {
    await dropSchema(owner, db.schema);
    await owner.close();
  });

  it("still load after every later migration", async () => {
    const saver = new PostgresCheckpointSaver(db);
    const latest = await saver.getTuple({ configurable: { thread_id: "fixture-thread" } });
    expect(latest?.checkpoint.id).toBe("1f0a0000-0000-6000-8000-000000000002");
    expect(latest?.checkpoint.channel_values["step"]).toBe(2);
    expect(latest?.checkpoint.channel_values["bin"]).toEqual(new Uint8Array([0, 1, 255]));
    const messages = latest?.checkpoint.channel_values["messages"] as unknown[];
    expect(messages.map((m) => [(m as HumanMessage).getType(), (m as HumanMessage).id])).toEqual([
      ["human", "m1"],
      ["ai", "m2"],
    ]);
    expect((messages[1] as AIMessage).tool_calls?.[0]).toMatchObject({ id: "c1", name: "add", args: { a: 2, b: 3 } });
    expect(latest?.parentConfig?.configurable?.["checkpoint_id"]).toBe("1f0a0000-0000-6000-8000-000000000001");
    const first = await saver.getTuple(latest!.parentConfig!);
    expect(first?.metadata).toEqual({ source: "loop", step: 0, parents: {} });
    const writes = (first?.pendingWrites ?? []) as [string, string, ToolMessage[]][];
    expect(writes.map(([taskId, channel]) => [taskId, channel])).toEqual([["task-1", "messages"]]);
    expect(writes[0]?.[2][0]).toBeInstanceOf(ToolMessage);
    const listed = [];
    for await (const tuple of saver.list({ configurable: { thread_id: "fixture-thread" } })) listed.push(tuple.checkpoint.id);
    expect(listed).toEqual(["1f0a0000-0000-6000-8000-000000000002", "1f0a0000-0000-6000-8000-000000000001"]);
  });
});
