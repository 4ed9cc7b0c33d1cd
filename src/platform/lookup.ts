// Lookups in the service's fixed tables by a key that comes from a request or a file. A plain object also
// answers for Object.prototype's members (`constructor`, `toString`, `__proto__`), so such a key would
// find a function and pass for a known currency, list type or month.

/** The table's own entry for `key`, or undefined; never an inherited member. */
export const ownEntry = <T>(table: Readonly<Record<string, T>>, key: string): T | undefined =>
  Object.hasOwn(table, key) ? table[key] : undefined;
