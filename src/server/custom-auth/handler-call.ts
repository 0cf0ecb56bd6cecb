import { AUTH_DEFAULTS } from "../../constants.js";
import { AuthRefusalError, DevmindError } from "../../errors.js";

/**
 * LangGraph's `HTTPException` (`@langchain/langgraph-sdk/auth`, any copy): an object with a
 * numeric `status` and `headers`, as the official server recognises it; Hono's HTTPException
 * (a `status` and `getResponse`) is taken the same way.
 */
function httpExceptionOf(error: unknown): { status: number; message: string; headers: Record<string, string> } | undefined {
  if (typeof error !== "object" || error === null || !("status" in error)) return undefined;
  const status = (error as { status: unknown }).status;
  if (typeof status !== "number" || !Number.isInteger(status) || status < 400 || status > 599) return undefined;
  if (!("headers" in error) && typeof (error as { getResponse?: unknown }).getResponse !== "function") return undefined;
  const headers: Record<string, string> = {};
  const given = (error as { headers?: unknown }).headers;
  if (given !== undefined && given !== null && typeof given === "object") {
    for (const [name, value] of new Headers(given as ConstructorParameters<typeof Headers>[0]).entries()) headers[name] = value;
  }
  const message = error instanceof Error ? error.message : "";
  return { status, message: message.slice(0, AUTH_DEFAULTS.messageMaxChars), headers };
}

/**
 * Calls a handler of the project's auth, bounded by `timeoutMs` (the handler's, DEVMIND_AUTH_TIMEOUT_MS). Its
 * HTTPException becomes an AuthRefusalError (its status, message and headers answer, as on the
 * official server); a DevmindError passes; anything else, or no answer in time, is
 * AUTH_HANDLER_FAILED naming `what` (500, as the official server answers a handler that throws), with the
 * cause for the log. Nothing is written before authorization, so a failed handler stores nothing.
 */
export async function callHandler<T>(what: string, call: () => T | Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new DevmindError("AUTH_HANDLER_FAILED", `the auth handler ${what} did not answer within ${timeoutMs} ms`, { details: { timeout: true } })),
      timeoutMs,
    );
    timer.unref();
  });
  try {
    return await Promise.race([Promise.resolve().then(call), timeout]);
  } catch (error) {
    if (error instanceof DevmindError) throw error;
    const exception = httpExceptionOf(error);
    if (exception !== undefined) throw new AuthRefusalError(exception.status, exception.message, exception.headers);
    const text = error instanceof Error ? error.message : String(error);
    throw new DevmindError("AUTH_HANDLER_FAILED", `the auth handler ${what} threw: ${text.slice(0, 500)}`, { cause: error });
  } finally {
    clearTimeout(timer);
  }
}
