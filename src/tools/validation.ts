import { TOOL_LIMITS } from "../constants.js";
import { cutWithMarker } from "./tool-result.js";

/** The part of a zod issue this module reads (zod 4's `$ZodIssue` has more). */
export interface IssueLike {
  readonly path: readonly PropertyKey[];
  readonly message: string;
}

/**
 * A readable summary of zod issues for an INVALID_ARGUMENTS message: `a: expected number;
 * items[2].name: required`, at most `TOOL_LIMITS.validationIssuesShown` issues, each bounded.
 *
 * Why: the model has to fix its arguments from this text alone, and a hostile argument (a huge
 * key or value echoed in a message) must not blow up the prompt.
 */
export function describeIssues(issues: readonly IssueLike[]): string {
  const shown = issues.slice(0, TOOL_LIMITS.validationIssuesShown).map((issue) => {
    const where = formatPath(issue.path);
    return cutWithMarker(where === "" ? issue.message : `${where}: ${issue.message}`, TOOL_LIMITS.validationIssueMaxChars);
  });
  const hidden = issues.length - shown.length;
  if (shown.length === 0) return "arguments do not match the schema";
  return hidden > 0 ? `${shown.join("; ")}; (and ${hidden} more)` : shown.join("; ");
}

/**
 * Finds a `__proto__` key anywhere in parsed JSON arguments and says where, or returns null.
 *
 * Why: `JSON.parse` creates `__proto__` as an own key; copying such an object with spread or
 * `Object.assign` in a tool would set a prototype. No legitimate argument is named that, so the
 * call is refused as INVALID_ARGUMENTS. The walk is iterative and bounded, so deep nesting cannot
 * overflow the stack.
 */
export function findForbiddenKey(value: object): string | null {
  interface Step {
    node: unknown;
    key: PropertyKey | null;
    parent: Step | null;
  }
  const stack: Step[] = [{ node: value, key: null, parent: null }];
  let budget = 100_000;
  while (stack.length > 0 && budget-- > 0) {
    const step = stack.pop() as Step;
    const node = step.node;
    if (node === null || typeof node !== "object") continue;
    if (Array.isArray(node)) {
      node.forEach((item, index) => stack.push({ node: item, key: index, parent: step }));
      continue;
    }
    for (const key of Object.keys(node)) {
      if (key === "__proto__") {
        const where = formatPath(pathOf({ node: null, key, parent: step }));
        return cutWithMarker(`${where}: the key "__proto__" is not allowed`, TOOL_LIMITS.validationIssueMaxChars);
      }
      stack.push({ node: (node as Record<string, unknown>)[key], key, parent: step });
    }
  }
  return null;

  function pathOf(step: Step): PropertyKey[] {
    const path: PropertyKey[] = [];
    for (let at: Step | null = step; at !== null && at.key !== null; at = at.parent) path.push(at.key);
    return path.reverse();
  }
}

function formatPath(path: readonly PropertyKey[]): string {
  let text = "";
  for (const part of path) {
    if (typeof part === "number") text += `[${part}]`;
    else if (typeof part === "symbol") text += `[${String(part)}]`;
    else text += text === "" ? part : `.${part}`;
  }
  return text;
}
