/**
 * `--diagnose-strip KEY[,KEY]`: a copy of langgraph.json without some keys, for a DIAGNOSTIC run
 * only (not the real check) when devmind cannot start with the official file as it is. A KEY is a
 * top-level key (`http`, `ui`) or a dotted path (`graphs.agent_simple`). Pure.
 */
export function stripConfigKeys(config: Record<string, unknown>, keys: readonly string[]): { config: Record<string, unknown>; missing: string[] } {
  const copy = structuredClone(config);
  const missing: string[] = [];
  for (const key of keys) {
    const path = key.split(".");
    let holder: unknown = copy;
    for (const part of path.slice(0, -1)) {
      holder = typeof holder === "object" && holder !== null ? (holder as Record<string, unknown>)[part] : undefined;
    }
    const last = path[path.length - 1] as string;
    if (typeof holder === "object" && holder !== null && Object.hasOwn(holder, last)) delete (holder as Record<string, unknown>)[last];
    else missing.push(key);
  }
  return { config: copy, missing };
}
