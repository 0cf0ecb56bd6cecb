/**
 * Reading a scripted model's JSON file (`DEVMIND_MODEL=scripted:PATH`). Every failure is a
 * `ModelError` with code `SCRIPT_INVALID` that names the file and says what is wrong: missing,
 * unreadable, not JSON (with line and column), or not a valid script (with turn and field).
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { ModelError } from "../errors.js";
import { findJsonError } from "./json-error-position.js";
import { parseScript, type ScriptedTurn } from "./scripted-turns.js";

/**
 * Reads and validates a script file; relative paths resolve against the working directory.
 * Synchronous because it runs once, while the model is built at startup.
 *
 * @example const model = new ScriptedChatModel(loadScriptFile("test/fixtures/two-tools.json"));
 */
export function loadScriptFile(path: string): ScriptedTurn[] {
  const absolute = resolve(path);
  let text: string;
  try {
    text = readFileSync(absolute, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason = code === "ENOENT" ? "not found" : code === "EISDIR" ? "is a directory" : `cannot be read (${code ?? String(error)})`;
    throw new ModelError("SCRIPT_INVALID", `Scripted model file ${absolute} ${reason}`, { details: { path: absolute, reason: code ?? "unreadable" }, cause: error });
  }
  const json = text.replace(/^\uFEFF/, "");
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    const found = findJsonError(json);
    const problem = found === undefined ? (error instanceof Error ? error.message : String(error)) : `${found.message} at line ${found.line}, column ${found.column}`;
    throw new ModelError("SCRIPT_INVALID", `Scripted model file ${absolute} is not valid JSON: ${problem}`, {
      details: { path: absolute, reason: "json", ...(found === undefined ? {} : { offset: found.offset, line: found.line, column: found.column }) },
      cause: error,
    });
  }
  return parseScript(value, absolute);
}
