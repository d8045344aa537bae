/**
 * The flags of the operators' commands that take several (import-placement,
 * verify-placement, export-placement): `--name value` (or `--name=value`) and `--switch`.
 * Anything else is refused: a mistyped flag must not start an import.
 */
export interface Flags {
  values: Map<string, string>;
  switches: Set<string>;
}

/** `--name value` and `--switch` flags; anything else is refused (a typo must not start an import) */
export function parseFlags(args: string[], valued: readonly string[], switches: readonly string[], usage: string): Flags {
  const values = new Map<string, string>();
  const on = new Set<string>();
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const eq = a.indexOf('=');
    const name = eq > 0 ? a.slice(0, eq) : a;
    if (valued.includes(name)) {
      const v = eq > 0 ? a.slice(eq + 1) : args[++i];
      if (v === undefined) throw new Error(`${name} needs a value\n${usage}`);
      values.set(name, v);
    } else if (switches.includes(a)) on.add(a);
    else throw new Error(`unknown argument ${a}\n${usage}`);
  }
  return { values, switches: on };
}

export const positiveInt = (flags: Flags, name: string): number | undefined => {
  const v = flags.values.get(name);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} takes a positive integer, not ${v}`);
  return n;
};
