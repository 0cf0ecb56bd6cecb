/**
 * What the attachment tools (`send_file`, `gen_image`) need from durable storage, defined here so
 * the tools layer does not import the runtime: `AttachmentStore` (src/runtime/attachments/attachment-store.ts)
 * implements it on the database, and `builtinTools({ attachments })` takes any implementation.
 */

/** A file to store for the user, with where it came from. */
export interface NewAttachment {
  /** The run whose tool call made it; with `toolCallId` (and `part`) the idempotency key. */
  runId?: string | undefined;
  threadId?: string | undefined;
  toolCallId: string;
  /** Which file of a call that makes several (gen_image); 0 by default. */
  part?: number;
  /** File name shown to the user (no directories). */
  name: string;
  mimeType: string;
  bytes: Uint8Array;
}

/**
 * A stored attachment, as tools return it to the model and the HTTP API lists it. `url` is where
 * `GET /files/{id}` serves it; `id` is a random uuid, so knowing one is the capability to fetch it.
 */
export interface AttachmentInfo {
  id: string;
  run_id: string | null;
  thread_id: string | null;
  tool_call_id: string;
  part: number;
  name: string;
  mime_type: string;
  size: number;
  /** Hex sha256 of the bytes. */
  sha256: string;
  url: string;
  /** ISO 8601. */
  created_at: string;
}

/**
 * Durable storage for attachments. `put` is idempotent per (runId, toolCallId, part): storing the
 * same call's file again (a re-executed call after a crash) returns the first attachment.
 */
export interface AttachmentSink {
  put(attachment: NewAttachment): Promise<AttachmentInfo>;
}

/** What a tool result shows of an attachment: `{id, name, mime_type, size, url}` (CONTRACT section 4). */
export function attachmentSummary(info: AttachmentInfo): { id: string; name: string; mime_type: string; size: number; url: string } {
  return { id: info.id, name: info.name, mime_type: info.mime_type, size: info.size, url: info.url };
}
