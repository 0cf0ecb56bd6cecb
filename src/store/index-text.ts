/**
 * Which texts of a value get embedded, with LangGraph's path syntax (`IndexConfig.fields`, a put's
 * `index`): `$` the whole value as JSON; `a.b` nested fields; `list[*].text` every element;
 * `list[0]`, `list[-1]` one element; `*` every field; `{a,b.c}` several fields. A string, number or
 * boolean is its text; an object or array is its JSON.
 */

/** Splits a path into tokens: `a.b[*].{c,d}` -> `a`, `b`, `[*]`, `{c,d}`. */
export function tokenizePath(path: string): string[] {
  const tokens: string[] = [];
  let current = "";
  let i = 0;
  while (i < path.length) {
    const char = path[i]!;
    if (char === "[" || char === "{") {
      if (current !== "") tokens.push(current);
      current = "";
      const close = char === "[" ? "]" : "}";
      let depth = 0;
      let token = "";
      do {
        const c = path[i]!;
        if (c === char) depth += 1;
        else if (c === close) depth -= 1;
        token += c;
        i += 1;
      } while (i < path.length && depth > 0);
      tokens.push(token);
      continue;
    }
    if (char === ".") {
      if (current !== "") tokens.push(current);
      current = "";
    } else {
      current += char;
    }
    i += 1;
  }
  if (current !== "") tokens.push(current);
  return tokens;
}

function asText(value: unknown): string[] {
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") return [String(value)];
  if (value === null || value === undefined) return [];
  if (typeof value === "object") return [JSON.stringify(value, null, 2)];
  return [];
}

function extract(value: unknown, tokens: readonly string[], position: number): string[] {
  if (position >= tokens.length) return asText(value);
  const token = tokens[position]!;
  if (token.startsWith("[") && token.endsWith("]")) {
    if (!Array.isArray(value)) return [];
    const index = token.slice(1, -1);
    if (index === "*") return value.flatMap((element) => extract(element, tokens, position + 1));
    let at = Number.parseInt(index, 10);
    if (Number.isNaN(at)) return [];
    if (at < 0) at += value.length;
    return at >= 0 && at < value.length ? extract(value[at], tokens, position + 1) : [];
  }
  if (token.startsWith("{") && token.endsWith("}")) {
    if (typeof value !== "object" || value === null) return [];
    const texts: string[] = [];
    for (const field of token.slice(1, -1).split(",").map((part) => part.trim())) {
      let current: unknown = value;
      for (const part of tokenizePath(field)) {
        current = typeof current === "object" && current !== null && part in current ? (current as Record<string, unknown>)[part] : undefined;
        if (current === undefined) break;
      }
      if (current !== undefined) texts.push(...asText(current));
    }
    return texts;
  }
  if (token === "*") {
    if (Array.isArray(value)) return value.flatMap((element) => extract(element, tokens, position + 1));
    if (typeof value === "object" && value !== null) return Object.values(value).flatMap((element) => extract(element, tokens, position + 1));
    return [];
  }
  if (typeof value === "object" && value !== null && token in value) return extract((value as Record<string, unknown>)[token], tokens, position + 1);
  return [];
}

/** The texts at `path` in `value` (see the module comment for the syntax). */
export function textsAtPath(value: unknown, path: string): string[] {
  if (path === "" || path === "$") return [JSON.stringify(value, null, 2)];
  return extract(value, tokenizePath(path), 0);
}

/**
 * The texts to embed for one item: `[field, text]` pairs, a field with several texts numbered
 * `path.0`, `path.1`, … so each keeps its own vector.
 */
export function indexTexts(value: Record<string, unknown>, paths: readonly string[]): [string, string][] {
  const pairs: [string, string][] = [];
  for (const path of paths) {
    const texts = textsAtPath(value, path);
    if (texts.length === 1) pairs.push([path, texts[0]!]);
    else texts.forEach((text, index) => pairs.push([`${path}.${index}`, text]));
  }
  return pairs;
}
