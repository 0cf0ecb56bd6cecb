import { extname } from "node:path";

/** MIME type for files whose extension is not in the table. */
export const DEFAULT_MIME_TYPE = "application/octet-stream";

const BY_EXTENSION: Readonly<Record<string, string>> = {
  ".txt": "text/plain; charset=utf-8",
  ".md": "text/markdown; charset=utf-8",
  ".csv": "text/csv; charset=utf-8",
  ".tsv": "text/tab-separated-values; charset=utf-8",
  ".log": "text/plain; charset=utf-8",
  ".html": "text/html; charset=utf-8",
  ".htm": "text/html; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".ts": "text/plain; charset=utf-8",
  ".py": "text/x-python; charset=utf-8",
  ".sh": "text/x-shellscript; charset=utf-8",
  ".json": "application/json",
  ".xml": "application/xml",
  ".yaml": "application/yaml",
  ".yml": "application/yaml",
  ".pdf": "application/pdf",
  ".zip": "application/zip",
  ".gz": "application/gzip",
  ".tar": "application/x-tar",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".svg": "image/svg+xml",
  ".ico": "image/x-icon",
  ".mp3": "audio/mpeg",
  ".wav": "audio/wav",
  ".ogg": "audio/ogg",
  ".mp4": "video/mp4",
  ".webm": "video/webm",
};

/**
 * The MIME type of a file name, from its extension (case-insensitive); `application/octet-stream`
 * when unknown. Why a small table rather than sniffing: the type only tells a client how to show
 * the file, and the extension is what the model chose to send. Types like text/html and
 * image/svg+xml can carry script: whoever serves attachments must not render them inline on its
 * own origin (e.g. `Content-Disposition: attachment` plus a restrictive CSP and `nosniff`).
 */
export function mimeTypeFor(fileName: string): string {
  return BY_EXTENSION[extname(fileName).toLowerCase()] ?? DEFAULT_MIME_TYPE;
}
