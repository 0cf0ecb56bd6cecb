import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import type { CheckpointTuple } from "@langchain/langgraph-checkpoint";
import { PostgresCheckpointSaver } from "../../src/checkpoint/postgres-saver.js";
import { migrate } from "../../src/db/migrate.js";
import { openDatabase } from "../../src/db/open-database.js";
import type { Database } from "../../src/db/types.js";
import { PGLITE_LOCK_FILE } from "../../src/constants.js";
import { DevmindError } from "../../src/errors.js";
// type-only: importing a value would run the fixture program inside this process
import type { InterruptGraphOptions, InterruptGraphOutput } from "../fixtures/interrupt-graph.js";
import { killLiveChildren, spawnFixture, waitForLine, type ChildExit } from "../helpers/child-process.js";
import { dropSchema, freshSchemaName, TEST_DATABASE_URL } from "../helpers/databases.js";
import { seedDataDir } from "../helpers/pglite-template.js";

// The durability promise across process boundaries: one process runs a graph to an interrupt()
// and exits; a different process resumes it from the checkpointer alone.

const APPROVAL_QUESTION = { question: "approve?", tool: "write_file" };
const FIXTURE = fileURLToPath(new URL("../fixtures/interrupt-graph.ts", import.meta.url));
const CHILD_LIMIT_MS = 60_000;
const READY_LIMIT_MS = 30_000;
// two children in sequence, each bounded, plus opening and checking in this process
const CASE_LIMIT_MS = 2 * CHILD_LIMIT_MS + 30_000;

const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  await killLiveChildren();
  // newest first: close databases before dropping their schema or removing their directory
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "devmind-xproc-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function openForTest(options: Parameters<typeof openDatabase>[0]): Promise<Database> {
  const db = await openDatabase(options);
  cleanups.push(() => db.close());
  return db;
}

/** Runs the fixture to completion and returns its one JSON line, failing with its stderr otherwise. */
async function runChild(mode: "start" | "resume", options: InterruptGraphOptions): Promise<InterruptGraphOutput> {
  const exit = await spawnFixture(FIXTURE, [mode, JSON.stringify(options)], CHILD_LIMIT_MS).exited;
  expect(exit.timedOut, `${mode} child ran past ${CHILD_LIMIT_MS} ms; stderr: ${exit.stderr}`).toBe(false);
  expect(exit.code, `${mode} child failed; stderr: ${exit.stderr}`).toBe(0);
  const lines = exit.stdout.split("\n").filter((line) => line.trim() !== "");
  expect(lines, `${mode} child printed: ${exit.stdout}`).toHaveLength(1);
  return JSON.parse(lines[0]!) as InterruptGraphOutput;
}

async function collect(iterable: AsyncIterable<CheckpointTuple>): Promise<CheckpointTuple[]> {
  const out: CheckpointTuple[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

interface Target {
  /** Database fields handed to both children. */
  connection: Pick<InterruptGraphOptions, "url" | "dataDir" | "schema">;
  /** The embedded database's lock file, for PGlite. */
  lockFile?: string;
  /** Opens the same database in this process (after the children are gone). */
  open(): Promise<Database>;
}

function pgliteTarget(): Target {
  const dataDir = seedDataDir(tempDir());
  const schema = freshSchemaName("xp");
  return {
    connection: { dataDir, schema },
    lockFile: join(dataDir, PGLITE_LOCK_FILE),
    open: () => openForTest({ dataDir, schema }),
  };
}

function postgresTarget(url: string): Target {
  const schema = freshSchemaName("xp");
  cleanups.push(async () => {
    const owner = await openDatabase({ url, schema, maxConnections: 1 });
    try {
      await dropSchema(owner, schema);
    } finally {
      await owner.close();
    }
  });
  return { connection: { url, schema }, open: () => openForTest({ url, schema, maxConnections: 2 }) };
}

const BACKEND_CASES = [
  { backend: "pglite", skip: false, target: pgliteTarget },
  { backend: "postgres", skip: TEST_DATABASE_URL === undefined, target: () => postgresTarget(TEST_DATABASE_URL!) },
] as const;

for (const { backend, skip, target: makeTarget } of BACKEND_CASES) {
  describe.skipIf(skip)(`cross-process interrupt and resume on ${backend}`, () => {
    it(
      "a second process resumes the first one's interrupted thread to completion, running each node once",
      async () => {
        const target = makeTarget();
        const counterFile = join(tempDir(), "prepare-runs.txt");
        const threadId = `thread-${freshSchemaName("x")}`;
        const base: InterruptGraphOptions = { ...target.connection, threadId, counterFile };

        const first = await runChild("start", base);
        expect(first.mode).toBe("start");
        expect(first.next).toEqual(["ask"]);
        expect(first.interrupts.map((item) => item.value)).toEqual([APPROVAL_QUESTION]);
        expect(first.state.log).toEqual(["prepare"]);
        expect(first.state.approved).toBeNull();
        if (target.lockFile !== undefined) expect(existsSync(target.lockFile), "lock file left behind by a clean exit").toBe(false);

        const second = await runChild("resume", { ...base, resume: { decision: "approve" } });
        expect(second.pid).not.toBe(first.pid);
        expect(second.state.log).toEqual(["prepare", 'ask:{"decision":"approve"}', "finish"]);
        expect(second.state.approved).toBe(true);
        expect(second.result).toEqual(second.state);
        expect(second.next).toEqual([]);
        expect(second.interrupts).toEqual([]);
        expect(readFileSync(counterFile, "utf8").trim().split("\n")).toEqual([`prepare ${first.pid}`]);
        if (target.lockFile !== undefined) expect(existsSync(target.lockFile)).toBe(false);

        const db = await target.open();
        const saver = new PostgresCheckpointSaver(db);
        const config = { configurable: { thread_id: threadId } };
        const tuples = await collect(saver.list(config));
        // input, then one checkpoint per superstep: START, prepare, ask (after resume), finish
        expect(tuples.map((tuple) => tuple.metadata?.step)).toEqual([3, 2, 1, 0, -1]);
        for (const [index, tuple] of tuples.entries()) {
          expect(tuple.config.configurable?.["thread_id"]).toBe(threadId);
          const older = tuples[index + 1];
          if (older === undefined) continue;
          expect(tuple.checkpoint.id > older.checkpoint.id, `checkpoint ${index} is not newer than ${index + 1}`).toBe(true);
          expect(tuple.metadata?.step).toBeGreaterThan(older.metadata!.step);
          expect(tuple.parentConfig?.configurable?.["checkpoint_id"]).toBe(older.checkpoint.id);
        }
        expect(tuples.at(-1)?.metadata?.source).toBe("input");
        expect(tuples.at(-1)?.parentConfig).toBeUndefined();

        // the checkpoint child 1 stopped on holds its interrupt and child 2's resume value
        const interrupted = tuples.find((tuple) => tuple.metadata?.step === 1);
        const writes = interrupted?.pendingWrites ?? [];
        const valuesOf = (channel: string): unknown[] => writes.filter(([, name]) => name === channel).map(([, , value]) => value);
        // LangGraph records Command({ resume }) once for the null task and once, as a list, for `ask`
        expect(valuesOf("__resume__")).toEqual([{ decision: "approve" }, [{ decision: "approve" }]]);
        expect(valuesOf("__interrupt__")).toEqual([[{ id: first.interrupts[0]?.id, value: APPROVAL_QUESTION }]]);

        const latest = await saver.getTuple(config);
        expect(latest?.checkpoint.id).toBe(tuples[0]?.checkpoint.id);
        expect(latest?.checkpoint.channel_values["log"]).toEqual(second.state.log);
        expect(latest?.checkpoint.channel_values["approved"]).toBe(true);
        expect(latest?.pendingWrites ?? []).toEqual([]);
      },
      CASE_LIMIT_MS,
    );
  });
}

describe("the embedded data directory across processes", () => {
  it(
    "is refused to a second process while a live holder has it, and taken over once the holder is SIGKILLed",
    async () => {
      const { connection, lockFile } = pgliteTarget();
      const holder = spawnFixture(FIXTURE, ["hold", JSON.stringify({ ...connection, threadId: "unused" })], CHILD_LIMIT_MS);
      await waitForLine(holder, "ready", READY_LIMIT_MS);
      expect(existsSync(lockFile!)).toBe(true);

      const refused = await openDatabase(connection).then(
        async (db) => {
          await db.close();
          return undefined;
        },
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(DevmindError);
      expect((refused as DevmindError).code).toBe("DATABASE_LOCKED");
      expect((refused as DevmindError).message).toContain(`process ${holder.pid} `);

      holder.process.kill("SIGKILL");
      const exit: ChildExit = await holder.exited;
      expect(exit.signal).toBe("SIGKILL");
      expect(existsSync(lockFile!), "a SIGKILLed holder cannot remove its lock file").toBe(true);

      const db = await openForTest(connection);
      expect(JSON.parse(readFileSync(lockFile!, "utf8")).pid).toBe(process.pid);
      // the killed holder had migrated; the directory must still be a working database
      await migrate(db);
      const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${connection.schema}".schema_migrations`);
      expect(rows[0]?.n).toBeGreaterThan(0);
      await db.close();
      expect(existsSync(lockFile!)).toBe(false);
    },
    CHILD_LIMIT_MS + READY_LIMIT_MS,
  );
});
