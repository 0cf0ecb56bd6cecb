/**
 * What a caller may see of a resource, as a JSON containment object over its metadata (a store
 * item's: its value with `namespace` and `key`): a row is visible when `metadata @> filter`. The
 * server builds it from the project's auth handler (src/server/custom-auth); the runtime applies
 * it in the SQL of every read and write it is given to. Undefined: everything is visible.
 */
export type AccessFilter = Readonly<Record<string, unknown>>;

/** The filter as the text of a jsonb parameter: `{}` (contained in every object) when there is none. */
export function accessJson(filter: AccessFilter | undefined): string {
  return JSON.stringify(filter ?? {});
}
