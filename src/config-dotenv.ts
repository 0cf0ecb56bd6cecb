/**
 * A small `.env` reader for config.ts, so devmind needs no dotenv dependency. It understands
 * the common subset: `KEY=value`, `export KEY=value`, `#` comments, blank lines, single quotes
 * (literal), double quotes (with `\n`, `\r`, `\t`, `\"`, `\\` escapes) and ` #` comments after
 * unquoted values. Anything else is an error naming the file and line, never echoing the line
 * (it may hold a secret).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { DOTENV_FILE } from "./constants.js";
import { ConfigError } from "./errors.js";

const ASSIGNMENT = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=(.*)$/;
const DOUBLE_QUOTE_ESCAPES: Record<string, string> = { n: "\n", r: "\r", t: "\t", '"': '"', "\\": "\\" };

/**
 * Parses the text of a `.env` file into a plain record (a later duplicate key wins).
 *
 * Exported for tests and for tools that want to check a file without loading it. `fileName`
 * only appears in error messages. Throws a `ConfigError` with `details.file` and
 * `details.line` (1-based) for the first line that is not a comment, blank or assignment.
 *
 * @example parseDotenv('export A="x\\ny" # note\nB=plain # note') // { A: "x\ny", B: "plain" }
 */
export function parseDotenv(text: string, fileName = DOTENV_FILE): Record<string, string> {
  const result: Record<string, string> = {};
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  lines.forEach((rawLine, index) => {
    const line = rawLine.trim();
    if (line === "" || line.startsWith("#")) return;
    const fail = (reason: string): never => {
      throw new ConfigError(`${fileName}:${index + 1}: ${reason}`, { file: fileName, line: index + 1 });
    };
    const match = ASSIGNMENT.exec(line);
    if (!match) return fail('expected KEY=value, "export KEY=value", a # comment or a blank line');
    const [, key = "", rawValue = ""] = match;
    const value = parseValue(rawValue);
    if (value === undefined) return fail(`the value of ${key} has an unterminated quote or text after the closing quote`);
    result[key] = value;
  });
  return result;
}

/**
 * Reads `<cwd>/.env` if it exists and returns its variables; a missing file gives `{}`.
 * Any other read error, or a malformed line, is a `ConfigError` naming the file.
 */
export function readDotenvFile(cwd: string): Record<string, string> {
  const file = join(cwd, DOTENV_FILE);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw new ConfigError(`${file}: cannot read (${(error as Error).message})`, { file });
  }
  return parseDotenv(text, file);
}

/** The value of one assignment, or undefined when its quoting is broken. */
function parseValue(afterEquals: string): string | undefined {
  const raw = afterEquals.trimStart();
  if (raw.startsWith('"')) return parseDoubleQuoted(raw);
  if (raw.startsWith("'")) {
    const end = raw.indexOf("'", 1);
    if (end === -1 || !isBlankOrComment(raw.slice(end + 1))) return undefined;
    return raw.slice(1, end);
  }
  // search before trimming so `KEY= # note` is empty while `KEY=#fff` keeps its hash
  const comment = afterEquals.search(/\s#/);
  return (comment === -1 ? afterEquals : afterEquals.slice(0, comment)).trim();
}

function parseDoubleQuoted(raw: string): string | undefined {
  let value = "";
  for (let i = 1; i < raw.length; i++) {
    const char = raw[i] as string;
    if (char === '"') return isBlankOrComment(raw.slice(i + 1)) ? value : undefined;
    if (char === "\\" && i + 1 < raw.length) {
      const next = raw[i + 1] as string;
      // unknown escapes stay as written, so Windows paths survive
      value += DOUBLE_QUOTE_ESCAPES[next] ?? `\\${next}`;
      i++;
      continue;
    }
    value += char;
  }
  return undefined;
}

function isBlankOrComment(rest: string): boolean {
  const trimmed = rest.trim();
  return trimmed === "" || trimmed.startsWith("#");
}
