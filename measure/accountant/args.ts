/**
 * The accountant's command line (`npm run accountant -- …`, measure/accountant/main.ts, and
 * `npm run bench -- --scenario capacity …`, bench/scenarios/capacity.ts): options over
 * DEFAULTS, and the --json file to append figures to.
 */
import { DEFAULTS, type AccountantOptions } from './options.js';
import { commandLine, plainErrors } from '../../scripts/args.js';

function list(v: string): number[] {
  return v.split(',').map((x) => {
    const n = Number(x);
    if (!Number.isFinite(n) || n <= 0) throw new UsageError(`not a positive number: ${x}`);
    return n;
  });
}

export const ACCOUNTANT_USAGE = [
  'usage: npm run accountant -- [--hosts N] [--containers 1,2,4,8] [--rates CLAIMS:CANDIDATES]',
  '                             [--duration S] [--refresh S] [--lifetime S] [--baremetal PER_S]',
  '                             [--resync S] [--image-interval S] [--no-deploy]',
  '                             [--validate K1,K2@C1,C2 | --no-validate] [--quick] [--json out.jsonl] [--profile saved.jsonl]',
].join('\n');

/** A mistake on the command line: the accountant prints its message and the usage, not a stack. */
export class UsageError extends Error {}

const STRING = { type: 'string' } as const;
const SWITCH = { type: 'boolean' } as const;
/** the accountant's options (also `npm run bench -- --scenario capacity …`'s) */
export const ACCOUNTANT_OPTIONS = {
  hosts: STRING,
  containers: STRING,
  rates: STRING,
  duration: STRING,
  refresh: STRING,
  lifetime: STRING,
  baremetal: STRING,
  resync: STRING,
  'image-interval': STRING,
  'no-deploy': SWITCH,
  validate: STRING,
  'no-validate': SWITCH,
  quick: SWITCH,
  json: STRING,
  profile: STRING,
  scenario: STRING,
  help: { type: 'boolean', short: 'h' },
} as const;

export function parseAccountantArgs(argv: string[]): { o: AccountantOptions; json?: string; help?: boolean } {
  const o: AccountantOptions = { ...DEFAULTS, validate: DEFAULTS.validate ? { ...DEFAULTS.validate } : undefined };
  let json: string | undefined;
  // in order: --quick after --containers overrides them, and the other way round
  for (const { name, value } of commandLine(
    argv,
    ACCOUNTANT_OPTIONS,
    plainErrors((m) => new UsageError(m)),
  ).options) {
    const v = value ?? '';
    if (name === 'hosts') o.hosts = list(v)[0]!;
    else if (name === 'containers') o.containers = list(v);
    else if (name === 'rates') {
      const [c, q] = v.split(':').map(Number);
      if (!(c! > 0)) throw new UsageError('--rates CLAIMS:CANDIDATES, e.g. 2:4');
      o.claimsPerS = c!;
      o.candidatesPerS = q && q > 0 ? q : 2 * c!;
    } else if (name === 'duration') o.durationS = list(v)[0]!;
    else if (name === 'refresh') o.refreshPeriodS = list(v)[0]!;
    else if (name === 'lifetime') o.lifetimeS = list(v)[0]!;
    else if (name === 'baremetal') o.baremetalPerS = Number(v);
    else if (name === 'resync') o.resyncS = list(v)[0]!;
    else if (name === 'image-interval') o.imageIntervalS = Number(v);
    else if (name === 'no-deploy') o.deploy = false;
    else if (name === 'validate') {
      const [ks, cs] = v.split('@');
      o.validate = { containers: list(ks!), claimsPerS: list(cs ?? String(o.claimsPerS)) };
    } else if (name === 'no-validate') o.validate = undefined;
    else if (name === 'quick') Object.assign(o, { hosts: 40, containers: [1, 2], durationS: 20, lifetimeS: 8, validate: undefined });
    else if (name === 'json') json = v;
    else if (name === 'profile') o.profileFrom = v;
    else if (name === 'help') return { o, json, help: true };
    // --scenario: the bench's own (bench/scenarios/capacity.ts)
  }
  return { o, json };
}
