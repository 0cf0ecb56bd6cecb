/**
 * Where a JSON text first goes wrong. Node 20's `JSON.parse` often reports a snippet instead of
 * a position ("Unexpected token '}', ..."x": }" is not valid JSON"), which is no help in a
 * 200-turn script; this small strict scanner finds the offset, line and column.
 */

/** The first syntax error of `text`, or undefined when it is valid JSON. Line and column are 1-based. */
export interface JsonErrorPosition {
  offset: number;
  line: number;
  column: number;
  message: string;
}

class Fail extends Error {
  constructor(
    readonly offset: number,
    message: string,
  ) {
    super(message);
  }
}

/** Scans `text` as strict JSON (RFC 8259) and returns the first error's position and a short description. */
export function findJsonError(text: string): JsonErrorPosition | undefined {
  let pos = 0;
  const at = () => text[pos];
  const describe = () => (pos >= text.length ? "end of input" : JSON.stringify(text[pos]));
  const fail = (expected: string): never => {
    throw new Fail(pos, `expected ${expected}, found ${describe()}`);
  };
  const skipSpace = () => {
    while (pos < text.length && " \t\n\r".includes(text[pos] as string)) pos += 1;
  };
  const literal = (word: string) => {
    if (text.startsWith(word, pos)) pos += word.length;
    else fail("a JSON value");
  };
  const string = () => {
    pos += 1;
    for (;;) {
      const ch = at();
      if (ch === undefined) fail('a closing "');
      if (ch === '"') break;
      if (ch === "\\") {
        const next = text[pos + 1];
        if (next !== undefined && '"\\/bfnrt'.includes(next)) pos += 2;
        else if (next === "u" && /^[0-9a-fA-F]{4}$/.test(text.slice(pos + 2, pos + 6))) pos += 6;
        else {
          pos += 1;
          fail("a valid escape");
        }
      } else if ((ch as string) < " ") {
        fail("no control character inside a string");
      } else pos += 1;
    }
    pos += 1;
  };
  const number = () => {
    const match = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(pos));
    if (match === null || match[0] === "" || match[0] === "-") fail("a JSON value");
    pos += (match as RegExpExecArray)[0].length;
  };
  const sequence = (close: "]" | "}", item: () => void) => {
    pos += 1;
    skipSpace();
    if (at() === close) {
      pos += 1;
      return;
    }
    for (;;) {
      item();
      skipSpace();
      if (at() === ",") {
        pos += 1;
        skipSpace();
      } else if (at() === close) {
        pos += 1;
        return;
      } else fail(`',' or '${close}'`);
    }
  };
  const value = (): void => {
    skipSpace();
    const ch = at();
    if (ch === "{") {
      sequence("}", () => {
        if (at() !== '"') fail("a property name in double quotes");
        string();
        skipSpace();
        if (at() !== ":") fail("':'");
        pos += 1;
        value();
      });
    } else if (ch === "[") sequence("]", value);
    else if (ch === '"') string();
    else if (ch === "t") literal("true");
    else if (ch === "f") literal("false");
    else if (ch === "n") literal("null");
    else number();
  };
  try {
    value();
    skipSpace();
    if (pos < text.length) fail("end of input");
    return undefined;
  } catch (error) {
    if (!(error instanceof Fail)) throw error;
    const before = text.slice(0, error.offset);
    const line = before.split("\n").length;
    return { offset: error.offset, line, column: error.offset - before.lastIndexOf("\n"), message: error.message };
  }
}
