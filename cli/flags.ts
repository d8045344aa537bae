/**
 * The flags of the operators' commands that take several (import-placement,
 * verify-placement, export-placement): `--name value` (or `--name=value`) and `--switch`.
 * Anything else is refused: a mistyped flag must not start an import.
 */
import { commandLine, type CommandLineErrors } from '../scripts/args.js';

export interface Flags {
  values: Map<string, string>;
  switches: Set<string>;
}

/** `--name value` and `--switch` flags; anything else is refused (a typo must not start an import) */
export function parseFlags(
  args: string[],
  valued: readonly string[],
  switches: readonly string[],
  usage: string,
  refusal = 'unknown argument',
): Flags {
  const options = Object.fromEntries([
    ...valued.map((f) => [f.slice(2), { type: 'string' as const }]),
    ...switches.map((f) => [f.slice(2), { type: 'boolean' as const }]),
  ]);
  const { values } = commandLine(args, options, {
    missing: (flag) => new Error(`${flag} needs a value\n${usage}`),
    unknown: (arg) => new Error(`${refusal} ${arg}\n${usage}`),
  });
  const flags: Flags = { values: new Map(), switches: new Set() };
  for (const [name, value] of Object.entries(values)) {
    if (value === true) flags.switches.add(`--${name}`);
    else flags.values.set(`--${name}`, value);
  }
  return flags;
}

/** the words of `berth <command>` for a mistake on its command line */
export function commandErrors(command: string): CommandLineErrors {
  return {
    missing: (flag) => new Error(`${flag} needs a value`),
    unknown: (arg) => new Error(`berth ${command}: unknown argument ${arg}`),
  };
}

export const positiveInt = (flags: Flags, name: string): number | undefined => {
  const v = flags.values.get(name);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} takes a positive integer, not ${v}`);
  return n;
};
