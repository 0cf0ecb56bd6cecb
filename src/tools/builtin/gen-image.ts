import { z } from "zod";
import { IMAGE_DEFAULTS, MODEL_DEFAULTS } from "../../constants.js";
import { attachmentSummary, type AttachmentSink } from "../attachment-sink.js";
import { defineTool, type Tool } from "../define-tool.js";
import { ToolFailure } from "../tool-failure.js";
import { cutWithMarker } from "../tool-result.js";
import { redactSecrets } from "../../secret-redaction.js";

/** Where and how `gen_image` calls an OpenAI-compatible images API (the config's `image`). */
export interface ImageSettings {
  /** DEVMIND_IMAGE_MODEL, e.g. `gpt-image-1` or `dall-e-3`. */
  model: string;
  /** DEVMIND_IMAGE_BASE_URL (else OPENAI_BASE_URL, else OpenAI's), e.g. `https://api.openai.com/v1`. */
  baseUrl?: string | undefined;
  /** DEVMIND_IMAGE_API_KEY (else OPENAI_API_KEY); sent as a bearer token, never stored or shown. */
  apiKey?: string | undefined;
  /** Per-call timeout; default `IMAGE_DEFAULTS.timeoutMs`. */
  timeoutMs?: number | undefined;
}

/** Sizes the images API accepts (`auto` only for gpt-image models). */
export const IMAGE_SIZES = ["256x256", "512x512", "1024x1024", "1792x1024", "1024x1792", "auto"] as const;

interface ImagesResponse {
  data?: { b64_json?: unknown; revised_prompt?: unknown }[];
}

/**
 * `gen_image {prompt, size?}` -> `{images: [{id, name, mime_type, size, url}], revised_prompt?}`:
 * asks an OpenAI-compatible images API (`POST {baseUrl}/images/generations`, one image, base64
 * response) and stores each image as an attachment. [external / no approval / not idempotent]
 *
 * Why plain fetch: one request, no SDK retries to reason about; the call's signal cancels it on
 * timeout and cancel. Errors become TOOL_FAILED with the server's own message (bounded, with the
 * key scrubbed should a server echo it): 4xx says the request was refused, 401/403 the
 * credentials, 429 a rate limit, 5xx a server failure. Redirects are refused so the bearer token
 * is never sent anywhere else. gpt-image models always answer in base64 and reject
 * `response_format`, so it is sent to other models only.
 */
export function genImageTool(settings: ImageSettings, attachments: AttachmentSink): Tool {
  const endpoint = `${(settings.baseUrl ?? MODEL_DEFAULTS.openaiBaseUrl).replace(/\/+$/, "")}/images/generations`;
  return defineTool({
    name: "gen_image",
    description: "Generate an image from a text prompt; it is sent to the user as an attachment (returns its id and url).",
    schema: z.object({
      prompt: z.string().min(1).max(IMAGE_DEFAULTS.promptMaxChars).describe("what the image should show"),
      size: z.enum(IMAGE_SIZES).optional().describe(`image size in pixels (default ${IMAGE_DEFAULTS.size})`),
    }),
    sideEffect: "external",
    approval: false,
    idempotent: false,
    timeoutMs: settings.timeoutMs ?? IMAGE_DEFAULTS.timeoutMs,
    async execute({ prompt, size }, ctx) {
      const body: Record<string, unknown> = { model: settings.model, prompt, n: 1, size: size ?? IMAGE_DEFAULTS.size };
      if (!settings.model.startsWith("gpt-image")) body["response_format"] = "b64_json";
      const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" };
      if (settings.apiKey !== undefined && settings.apiKey !== "") headers["authorization"] = `Bearer ${settings.apiKey}`;
      const scrub = (text: string) => scrubKey(text, settings.apiKey);
      let response: Response;
      try {
        response = await fetch(endpoint, { method: "POST", headers, body: JSON.stringify(body), signal: ctx.signal, redirect: "error" });
      } catch (error) {
        if (ctx.signal.aborted) throw error;
        throw new ToolFailure("TOOL_FAILED", `could not reach the image API: ${scrub(networkReason(error))}`);
      }
      const text = await readBounded(response, IMAGE_DEFAULTS.maxResponseBytes, ctx.signal);
      if (!response.ok) throw new ToolFailure("TOOL_FAILED", describeHttpError(response.status, scrub(serverMessage(text))));
      let parsed: ImagesResponse;
      try {
        parsed = JSON.parse(text) as ImagesResponse;
      } catch {
        throw new ToolFailure("TOOL_FAILED", "the image API answered with something that is not JSON");
      }
      const items = Array.isArray(parsed?.data) ? parsed.data : [];
      const images = items.filter((item) => typeof item?.b64_json === "string" && item.b64_json !== "");
      if (images.length === 0) throw new ToolFailure("TOOL_FAILED", "the image API returned no image data (expected data[].b64_json)");
      const saved = [];
      for (const [part, item] of images.entries()) {
        const bytes = Buffer.from(item.b64_json as string, "base64");
        if (bytes.length === 0) throw new ToolFailure("TOOL_FAILED", "the image API returned an empty image");
        const kind = imageKind(bytes);
        ctx.signal.throwIfAborted();
        const info = await attachments.put({
          runId: ctx.runId,
          threadId: ctx.threadId,
          toolCallId: ctx.toolCallId,
          part,
          name: `image-${part + 1}.${kind.extension}`,
          mimeType: kind.mimeType,
          bytes,
        });
        saved.push(attachmentSummary(info));
      }
      const revised = images.find((item) => typeof item.revised_prompt === "string")?.revised_prompt as string | undefined;
      return revised === undefined ? { images: saved } : { images: saved, revised_prompt: revised };
    },
  });
}

/** PNG unless the bytes say JPEG or WebP (gpt-image models can be asked for those). */
function imageKind(bytes: Buffer): { mimeType: string; extension: string } {
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return { mimeType: "image/jpeg", extension: "jpg" };
  if (bytes.subarray(0, 4).toString("latin1") === "RIFF" && bytes.subarray(8, 12).toString("latin1") === "WEBP") return { mimeType: "image/webp", extension: "webp" };
  return { mimeType: "image/png", extension: "png" };
}

function describeHttpError(status: number, message: string): string {
  const said = message === "" ? "" : `: ${message}`;
  if (status === 401 || status === 403) return `the image API rejected the credentials (HTTP ${status})${said}`;
  if (status === 429) return `the image API is rate limiting or out of quota (HTTP 429)${said}; try again later`;
  if (status >= 500) return `the image API failed (HTTP ${status})${said}; try again later`;
  return `the image API refused the request (HTTP ${status})${said}`;
}

/** OpenAI's `{"error": {"message"}}`, or the start of whatever else the server said. */
function serverMessage(text: string): string {
  let message = text;
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    if (typeof parsed?.error === "object" && typeof parsed.error?.message === "string") message = parsed.error.message;
    else if (typeof parsed?.error === "string") message = parsed.error;
    else if (typeof parsed?.message === "string") message = parsed.message;
  } catch {
    // not JSON: keep the text
  }
  return cutWithMarker(message.replace(/\s+/g, " ").trim(), IMAGE_DEFAULTS.errorMessageMaxChars);
}

/** Removes the key, and anything shaped like a secret, from text bound for the model. */
function scrubKey(text: string, apiKey: string | undefined): string {
  return redactSecrets(text, apiKey === undefined ? [] : [apiKey]);
}

function networkReason(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  if (typeof cause?.code === "string") return cause.code;
  if (typeof cause?.message === "string") return cause.message;
  return error instanceof Error ? error.message : String(error);
}

/** The response body as text, refusing more than `maxBytes`. */
async function readBounded(response: Response, maxBytes: number, signal: AbortSignal): Promise<string> {
  const declared = Number(response.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw new ToolFailure("TOOL_FAILED", `the image API answered with ${declared} bytes; at most ${maxBytes} are read`);
  }
  if (response.body === null) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) throw new ToolFailure("TOOL_FAILED", `the image API answered with more than ${maxBytes} bytes`);
      chunks.push(value);
    }
  } catch (error) {
    await reader.cancel().catch(() => undefined);
    if (signal.aborted || error instanceof ToolFailure) throw error;
    throw new ToolFailure("TOOL_FAILED", `the image API's answer broke off: ${networkReason(error)}`);
  }
  return Buffer.concat(chunks).toString("utf8");
}
