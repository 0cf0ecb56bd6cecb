import { StoreInputError } from "../errors.js";
import type { FilterCondition } from "./store-sql.js";

const OPERATORS = ["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin"] as const;
type Operator = (typeof OPERATORS)[number];

function isOperatorObject(value: unknown): value is Partial<Record<Operator, unknown>> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && Object.keys(value).every((key) => (OPERATORS as readonly string[]).includes(key));
}

/** Equality (`ne`: inequality) with `expected`: containment for scalars, JSON equality for objects and arrays. */
function equality(key: string, expected: unknown, negate: boolean): FilterCondition {
  const scalar = expected === null || typeof expected === "string" || typeof expected === "number" || typeof expected === "boolean";
  if (scalar && (typeof expected !== "number" || Number.isFinite(expected))) return { op: negate ? "lacks" : "has", object: JSON.stringify({ [key]: expected }) };
  return { op: negate ? "ne" : "eq", key, json: json(expected) };
}

function json(value: unknown): string {
  // undefined has no JSON form; LangGraph's in-memory store compares it with ===, which a stored
  // JSON value never equals
  return value === undefined ? "null" : JSON.stringify(value);
}

/**
 * Turns a search `filter` into SQL conditions with LangGraph's semantics on the item's top-level
 * keys: a plain value means equality (JSON equality here, so equal objects match too), an object
 * whose keys are all operators (`$eq $ne $gt $gte $lt $lte $in $nin`) applies each of them;
 * `$gt`…`$lte` compare JSON numbers only, and a bound that is not a number matches nothing.
 */
export function filterConditions(filter: Record<string, unknown> | undefined): FilterCondition[] {
  if (filter === undefined || filter === null) return [];
  if (typeof filter !== "object" || Array.isArray(filter)) throw new StoreInputError("a search filter must be an object of field conditions");
  const conditions: FilterCondition[] = [];
  for (const [key, expected] of Object.entries(filter)) {
    if (!isOperatorObject(expected)) {
      conditions.push(equality(key, expected, false));
      continue;
    }
    // `{}` is an operator object with no operators: it holds for every item, as in LangGraph
    for (const [operator, bound] of Object.entries(expected) as [Operator, unknown][]) {
      switch (operator) {
        case "$eq":
          conditions.push(equality(key, bound, false));
          break;
        case "$ne":
          conditions.push(equality(key, bound, true));
          break;
        case "$in":
        case "$nin":
          if (Array.isArray(bound)) conditions.push({ op: operator === "$in" ? "in" : "nin", key, json: JSON.stringify(bound) });
          else if (operator === "$in") conditions.push({ op: "false" });
          break;
        default: {
          const number = Number(bound);
          conditions.push(Number.isNaN(number) ? { op: "false" } : { op: operator.slice(1) as "gt" | "gte" | "lt" | "lte", key, number });
        }
      }
    }
  }
  return conditions;
}
