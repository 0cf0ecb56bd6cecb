// HTTP client of the devmind page: same-origin fetches with the API key (if the user gave one),
// JSON in and out, errors as ApiError with the server's {"error": CODE, "message": TEXT}.

const KEY_STORAGE = "devmind.apiKey";

/** An HTTP error answer of the devmind API. */
export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {string} code
   * @param {string} message
   */
  constructor(status, code, message) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
  }
}

/** @type {string | null} */
let memoryKey = null;

/** The API key the user entered this session, or null. @returns {string | null} */
export function apiKey() {
  try {
    return window.sessionStorage.getItem(KEY_STORAGE) ?? memoryKey;
  } catch {
    return memoryKey;
  }
}

/**
 * Keeps the key for this browser tab only (sessionStorage; memory when storage is unavailable).
 * An empty key forgets it.
 * @param {string} key
 */
export function setApiKey(key) {
  memoryKey = key === "" ? null : key;
  try {
    if (key === "") window.sessionStorage.removeItem(KEY_STORAGE);
    else window.sessionStorage.setItem(KEY_STORAGE, key);
  } catch {
    // memory only
  }
}

/**
 * Headers every API call carries: the key as `x-api-key` and as a bearer token, when there is
 * one (a server with a project auth handler reads the token it issued from `Authorization`).
 * @param {Record<string, string>} [extra]
 * @returns {Record<string, string>}
 */
export function authHeaders(extra = {}) {
  const key = apiKey();
  return key === null ? { ...extra } : { ...extra, "x-api-key": key, authorization: `Bearer ${key}` };
}

/** Called with every ApiError that means "no or wrong API key", so the page can ask for one. @type {(error: ApiError) => void} */
let onUnauthorized = () => undefined;

/** @param {(error: ApiError) => void} handler */
export function setUnauthorizedHandler(handler) {
  onUnauthorized = handler;
}

/**
 * Turns a non-2xx response into an ApiError: devmind's routes answer `{error, message}`, the
 * LangGraph routes a plain-text message as the official server does (its text becomes the message).
 * @param {Response} response
 * @returns {Promise<ApiError>}
 */
export async function errorOf(response) {
  let code = `HTTP_${response.status}`;
  let message = response.statusText || `request failed with status ${response.status}`;
  let text = "";
  try {
    text = await response.text();
  } catch {
    // no body: keep the status text
  }
  try {
    const body = JSON.parse(text);
    if (body !== null && typeof body === "object") {
      if (typeof body.error === "string") code = body.error;
      if (typeof body.message === "string") message = body.message;
    }
  } catch {
    if (text.trim() !== "") message = text.trim().slice(0, 500);
  }
  const error = new ApiError(response.status, code, message);
  // 401: no key; 403 FORBIDDEN: a key the server does not know
  if (response.status === 401 || (response.status === 403 && code === "FORBIDDEN")) onUnauthorized(error);
  return error;
}

/**
 * Calls the API and returns the parsed JSON answer (null for an empty body).
 * @param {string} method
 * @param {string} path  same-origin path, e.g. `/threads`
 * @param {unknown} [body]  sent as JSON when given
 * @returns {Promise<any>}
 */
export async function request(method, path, body) {
  /** @type {RequestInit} */
  const init = { method, headers: authHeaders(body === undefined ? { accept: "application/json" } : { accept: "application/json", "content-type": "application/json" }) };
  if (body !== undefined) init.body = JSON.stringify(body);
  let response;
  try {
    response = await fetch(path, init);
  } catch (error) {
    throw new ApiError(0, "NETWORK", `the server did not answer (${error instanceof Error ? error.message : String(error)})`);
  }
  if (!response.ok) throw await errorOf(response);
  const text = await response.text();
  return text === "" ? null : JSON.parse(text);
}

/**
 * Fetches a stored file (an attachment) with the key and returns a blob: URL for it. Only raster
 * images keep their type (to show in <img>); everything else becomes an opaque download, so an
 * HTML or SVG attachment can never run as a page of this origin.
 * @param {string} url  `/files/{id}`
 * @param {string} mimeType
 * @returns {Promise<string>}
 */
export async function fileBlobUrl(url, mimeType) {
  if (!url.startsWith("/files/")) throw new ApiError(0, "BAD_URL", "attachments are only fetched from /files/");
  const response = await fetch(url, { headers: authHeaders() });
  if (!response.ok) throw await errorOf(response);
  const data = await response.arrayBuffer();
  const type = isSafeImage(mimeType) ? mimeType : "application/octet-stream";
  return URL.createObjectURL(new Blob([data], { type }));
}

/** @param {string} mimeType @returns {boolean} */
export function isSafeImage(mimeType) {
  return ["image/png", "image/jpeg", "image/gif", "image/webp"].includes(mimeType);
}
