/**
 * Command lines of Berth's scripts, `npm start` and the benches: node:util's parseArgs,
 * with each command's own words for a mistake. Options are `--name value` (or
 * `--name=value`) and `--switch`; a value is the next argument whatever it looks like
 * (`--table --fresh` names a table "--fresh", as the hand-written parsers this replaced
 * did). The options come back in command-line order too, for commands where a later flag
 * overrides an earlier one (`--events-file F --no-events`).
 */
import { parseArgs } from 'node:util';

export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
}

export interface CommandLineErrors {
  /** `--name` as written, with no value after it */
  missing(flag: string): Error;
  /** an option nobody declared, a value given to a switch (`--fresh=1`), or a positional argument the command takes none of */
  unknown(arg: string): Error;
}

export interface CommandLine {
  /** each option as given, in order (a switch's value is undefined) */
  options: Array<{ name: string; flag: string; value: string | undefined }>;
  /** the last value of each option (switches: true) */
  values: Record<string, string | true>;
  positionals: string[];
}

/** Parse `argv` against `options`; `positionals`: how many plain arguments the command takes (default none). */
export function commandLine(argv: readonly string[], options: Record<string, OptionSpec>, errors: CommandLineErrors, positionals = 0): CommandLine {
  // strict: false keeps parseArgs from refusing `--table -x`; what strict mode checks is checked below, in order
  const { tokens } = parseArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true });
  const out: CommandLine = { options: [], values: {}, positionals: [] };
  for (const t of tokens) {
    if (t.kind === 'option-terminator') continue;
    if (t.kind === 'positional') {
      if (out.positionals.length >= positionals) throw errors.unknown(t.value);
      out.positionals.push(t.value);
      continue;
    }
    const spec = options[t.name];
    const written = t.inlineValue ? argv[t.index]! : t.rawName;
    if (!spec || (spec.type === 'boolean' && t.value !== undefined)) throw errors.unknown(written);
    if (spec.type === 'string' && t.value === undefined) throw errors.missing(t.rawName);
    out.options.push({ name: t.name, flag: t.rawName, value: t.value });
    out.values[t.name] = t.value ?? true;
  }
  return out;
}

/** the usual words: `--x needs a value`, `unknown option --x` (with `usage` after them, if given) */
export function plainErrors(make: (message: string) => Error = (m) => new Error(m), usage?: string): CommandLineErrors {
  const tail = usage ? `\n${usage}` : '';
  return {
    missing: (flag) => make(`${flag} needs a value${tail}`),
    unknown: (arg) => make(`unknown option ${arg}${tail}`),
  };
}

/**
 * Options before a command (`berth --table T tree …`): the values of the leading options
 * in `options`, and the command line from the first argument that is not one of them.
 */
export function leadingOptions(
  argv: readonly string[],
  options: Record<string, OptionSpec>,
  errors: CommandLineErrors,
): { values: Record<string, string>; rest: string[] } {
  const { tokens } = parseArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true });
  const values: Record<string, string> = {};
  for (const t of tokens) {
    if (t.kind !== 'option' || !options[t.name]) return { values, rest: argv.slice(t.index) };
    if (t.value === undefined) throw errors.missing(t.rawName);
    values[t.name] = t.value;
  }
  return { values, rest: [] };
}
