import { createHash, randomUUID } from "node:crypto";
import { ATTACHMENT_LIMITS } from "../../constants.js";
import type { Database } from "../../db/types.js";
import { DevmindError } from "../../errors.js";
import type { AttachmentInfo, AttachmentSink, NewAttachment } from "../../tools/attachment-sink.js";
import { attachmentSql } from "./attachment-sql.js";
import { isUuid } from "../queue/run-record.js";

export type { AttachmentInfo, AttachmentSink, NewAttachment } from "../../tools/attachment-sink.js";

/** An attachment with its content, as `AttachmentStore.get` returns it. */
export interface StoredAttachment {
  info: AttachmentInfo;
  bytes: Buffer;
}

interface InfoRow {
  id: string;
  run_id: string | null;
  thread_id: string | null;
  tool_call_id: string;
  part: number;
  name: string;
  mime_type: string;
  size: string;
  sha256: string;
  created_at: string;
}

/**
 * Files runs sent to the user (`send_file`, `gen_image`), kept in the database's `attachments`
 * table: bytes, name, MIME type, size, sha256, and the run / thread / tool call that made them.
 *
 * Why in the database: every process on the same database (server, workers) can serve every file,
 * backups take them along, and a file outlives the workspace it was read from. Why random ids:
 * `GET /files/{id}` serves by id, so ids must not be guessable. `put` is idempotent per
 * (run, tool call, part): a call re-executed after a crash gets its first attachment back.
 *
 * @example
 *   const attachments = new AttachmentStore(db);
 *   const tools = builtinTools({ workspace, attachments });      // enables send_file
 *   const file = await attachments.get(id);                      // { info, bytes } | undefined
 */
export class AttachmentStore implements AttachmentSink {
  readonly #db: Database;
  readonly #sql: ReturnType<typeof attachmentSql>;

  constructor(db: Database) {
    this.#db = db;
    this.#sql = attachmentSql(db.schema);
  }

  /**
   * Stores a file and returns its info (url `/files/{id}`). With a run id, a second `put` for the
   * same run, tool call and part stores nothing and returns the first one.
   *
   * @throws DevmindError ATTACHMENT_INVALID for an empty or overlong name, a file over
   *   `ATTACHMENT_LIMITS.maxBytes`, or a bad part number.
   */
  async put(attachment: NewAttachment): Promise<AttachmentInfo> {
    const { name, mimeType, toolCallId } = attachment;
    const part = attachment.part ?? 0;
    const bytes = Buffer.from(attachment.bytes.buffer, attachment.bytes.byteOffset, attachment.bytes.byteLength);
    if (typeof name !== "string" || name === "" || name.length > ATTACHMENT_LIMITS.nameMaxChars) invalid(`attachment name must be 1 to ${ATTACHMENT_LIMITS.nameMaxChars} characters`);
    if (typeof mimeType !== "string" || mimeType === "") invalid("attachment MIME type is empty");
    if (typeof toolCallId !== "string") invalid("attachment tool call id must be a string");
    if (!Number.isInteger(part) || part < 0) invalid("attachment part must be a non-negative integer");
    if (bytes.length > ATTACHMENT_LIMITS.maxBytes) invalid(`attachment is ${bytes.length} bytes; the limit is ${ATTACHMENT_LIMITS.maxBytes}`);
    const runId = attachment.runId ?? null;
    const sha256 = createHash("sha256").update(bytes).digest("hex");
    const inserted = await this.#db.query<InfoRow>(this.#sql.insert, [
      randomUUID(),
      runId,
      attachment.threadId ?? null,
      toolCallId,
      part,
      name,
      mimeType,
      bytes.length,
      sha256,
      bytes,
    ]);
    const row = inserted.rows[0] ?? (runId === null ? undefined : (await this.#db.query<InfoRow>(this.#sql.byCall, [runId, toolCallId, part])).rows[0]);
    if (row === undefined) throw new DevmindError("ATTACHMENT_INVALID", "the attachment was neither stored nor found");
    return toInfo(row);
  }

  /** The attachment and its bytes, or undefined for an unknown or malformed id (never a SQL error). */
  async get(id: string): Promise<StoredAttachment | undefined> {
    if (!isUuid(id)) return undefined;
    const row = (await this.#db.query<InfoRow & { bytes: Uint8Array }>(this.#sql.get, [id])).rows[0];
    if (row === undefined) return undefined;
    return { info: toInfo(row), bytes: Buffer.from(row.bytes.buffer, row.bytes.byteOffset, row.bytes.byteLength) };
  }

  /** The attachment's info without its bytes (for HEAD requests and listings), or undefined. */
  async info(id: string): Promise<AttachmentInfo | undefined> {
    if (!isUuid(id)) return undefined;
    const row = (await this.#db.query<InfoRow>(this.#sql.info, [id])).rows[0];
    return row === undefined ? undefined : toInfo(row);
  }

  /** Every attachment of a run, oldest first (no bytes). */
  async listForRun(runId: string): Promise<AttachmentInfo[]> {
    if (typeof runId !== "string") return [];
    return (await this.#db.query<InfoRow>(this.#sql.listForRun, [runId])).rows.map(toInfo);
  }

  /** Deletes every attachment of a thread (when the thread itself is deleted); returns how many went. */
  async deleteForThread(threadId: string): Promise<number> {
    if (typeof threadId !== "string") return 0;
    return Number((await this.#db.query<{ n: number }>(this.#sql.deleteForThread, [threadId])).rows[0]?.n ?? 0);
  }
}

function toInfo(row: InfoRow): AttachmentInfo {
  return {
    id: row.id,
    run_id: row.run_id,
    thread_id: row.thread_id,
    tool_call_id: row.tool_call_id,
    part: Number(row.part),
    name: row.name,
    mime_type: row.mime_type,
    size: Number(row.size),
    sha256: row.sha256,
    url: `${ATTACHMENT_LIMITS.urlPrefix}${row.id}`,
    created_at: row.created_at,
  };
}

function invalid(message: string): never {
  throw new DevmindError("ATTACHMENT_INVALID", message);
}
