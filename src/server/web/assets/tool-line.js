// One tool call in the timeline: a single folded line (status icon, tool name, short summary of
// the arguments) that opens on click to show the arguments, the result and any attachments.

import { fileBlobUrl, isSafeImage } from "./api.js";
import { append, el, prettyJson, summarize } from "./dom.js";

/** Icon and accessible label of each tool call status. */
const STATUS = {
  awaiting: { icon: "‖", label: "waiting for approval" },
  approved: { icon: "…", label: "approved" },
  running: { icon: "…", label: "running" },
  ok: { icon: "✓", label: "succeeded" },
  failed: { icon: "✗", label: "failed" },
  rejected: { icon: "⊘", label: "rejected" },
  unknown: { icon: "?", label: "outcome unknown" },
};

let serial = 0;

/**
 * @typedef {{ id: string, name: string, mime_type: string, size: number, url: string }} Attachment
 * @typedef {keyof typeof STATUS} ToolStatus
 */

/** A tool call's line in the timeline. */
export class ToolLine {
  /**
   * @param {{ toolCallId: string, tool: string, args: unknown, onOpen: () => void }} options
   */
  constructor({ toolCallId, tool, args, onOpen }) {
    serial += 1;
    this.toolCallId = toolCallId;
    this.tool = tool;
    this.hasResult = false;
    /** @type {Set<string>} */
    this.shownAttachments = new Set();
    const detailsId = `tool-details-${serial}`;
    this.icon = el("span", { class: "tool-icon", "aria-hidden": "true" });
    this.statusText = el("span", { class: "visually-hidden" });
    this.summary = el("span", { class: "tool-summary", "data-testid": "tool-summary" });
    this.meta = el("span", { class: "tool-meta" });
    this.toggle = el(
      "button",
      { type: "button", class: "tool-toggle", "aria-expanded": "false", "aria-controls": detailsId, "data-testid": "tool-toggle" },
      this.icon,
      this.statusText,
      el("span", { class: "tool-name", "data-testid": "tool-name", text: tool }),
      this.summary,
      this.meta,
    );
    this.argsView = el("pre", { class: "tool-args", "data-testid": "tool-args" });
    this.resultView = el("pre", { class: "tool-result", "data-testid": "tool-result", text: "(no result yet)" });
    this.attachments = el("div", { class: "attachments", "data-testid": "attachments", hidden: true });
    this.details = el(
      "div",
      { class: "tool-details", id: detailsId, hidden: true, "data-testid": "tool-details" },
      el("h4", { text: "Arguments" }),
      this.argsView,
      el("h4", { text: "Result" }),
      this.resultView,
    );
    // attachments stay visible under the folded line: they are what the user asked for
    this.node = el("li", { class: "event tool", "data-testid": "tool-line", "data-tool": tool, "data-tool-call-id": toolCallId }, this.toggle, this.details, this.attachments);
    this.toggle.addEventListener("click", () => {
      const open = this.details.hidden;
      this.details.hidden = !open;
      this.toggle.setAttribute("aria-expanded", String(open));
      if (open) onOpen();
    });
    this.setArgs(args);
    this.setStatus("running");
  }

  /** @param {unknown} args */
  setArgs(args) {
    this.summary.textContent = summarize(args);
    this.argsView.textContent = prettyJson(args);
  }

  /**
   * @param {ToolStatus} status
   * @param {string} [note]  shown after the summary (duration, error code, who decided)
   */
  setStatus(status, note) {
    const entry = STATUS[status];
    this.node.dataset["status"] = status;
    this.icon.textContent = entry.icon;
    this.statusText.textContent = `${entry.label}: `;
    if (note !== undefined) this.meta.textContent = note;
  }

  /**
   * Shows the tool's result (the ToolMessage content: CONTRACT section 4's envelope, as JSON text).
   * @param {string} content
   */
  setResult(content) {
    this.hasResult = true;
    let parsed;
    try {
      parsed = JSON.parse(content);
    } catch {
      parsed = undefined;
    }
    this.resultView.textContent = parsed === undefined ? content : prettyJson(parsed);
    for (const attachment of findAttachments(parsed)) this.addAttachment(attachment);
  }

  /** @param {Attachment} attachment */
  addAttachment(attachment) {
    if (this.shownAttachments.has(attachment.id)) return;
    this.shownAttachments.add(attachment.id);
    this.attachments.hidden = false;
    append(this.attachments, attachmentView(attachment));
  }
}

/**
 * Finds attachment records (`{id, name, mime_type, size, url}` with a `/files/` url) anywhere in a
 * tool result, e.g. send_file's `data` or gen_image's list.
 * @param {unknown} value
 * @param {number} [depth]
 * @returns {Attachment[]}
 */
export function findAttachments(value, depth = 0) {
  if (value === null || typeof value !== "object" || depth > 6) return [];
  if (Array.isArray(value)) return value.flatMap((item) => findAttachments(item, depth + 1));
  const record = /** @type {Record<string, unknown>} */ (value);
  if (
    typeof record["id"] === "string" &&
    typeof record["name"] === "string" &&
    typeof record["mime_type"] === "string" &&
    typeof record["url"] === "string" &&
    record["url"].startsWith("/files/")
  ) {
    return [/** @type {Attachment} */ (/** @type {unknown} */ (record))];
  }
  return Object.values(record).flatMap((item) => findAttachments(item, depth + 1));
}

/**
 * A link that downloads the attachment (fetched with the API key), and for raster images the
 * image itself.
 * @param {Attachment} attachment
 * @returns {HTMLElement}
 */
function attachmentView(attachment) {
  const size = typeof attachment.size === "number" ? ` (${formatSize(attachment.size)})` : "";
  const link = el("a", { href: "#", class: "attachment-link", "data-testid": "attachment-link", download: attachment.name, text: `${attachment.name}${size}` });
  const view = el("div", { class: "attachment", "data-testid": "attachment" }, link);
  let blobUrl = "";
  const ensure = async () => {
    if (blobUrl === "") blobUrl = await fileBlobUrl(attachment.url, attachment.mime_type);
    return blobUrl;
  };
  link.addEventListener("click", async (event) => {
    if (link.getAttribute("href") !== "#") return;
    event.preventDefault();
    try {
      link.setAttribute("href", await ensure());
      link.click();
    } catch (error) {
      append(view, el("span", { class: "error", role: "alert", text: ` ${error instanceof Error ? error.message : String(error)}` }));
    }
  });
  if (isSafeImage(attachment.mime_type)) {
    const image = el("img", { alt: attachment.name, class: "attachment-image", "data-testid": "attachment-image" });
    append(view, image);
    ensure().then(
      (url) => image.setAttribute("src", url),
      (error) => append(view, el("span", { class: "error", text: ` ${error instanceof Error ? error.message : String(error)}` })),
    );
  }
  return view;
}

/** @param {number} bytes @returns {string} */
function formatSize(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
