/**
 * The accountant's command line (`npm run accountant -- …`, bench/accountant.ts, and
 * `npm run bench -- --scenario capacity …`, bench/scenarios/capacity.ts): options over
 * DEFAULTS, and the --json file to append figures to.
 */
import { DEFAULTS, type AccountantOptions } from './accountant.js';

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

export function parseAccountantArgs(argv: string[]): { o: AccountantOptions; json?: string; help?: boolean } {
  const o: AccountantOptions = { ...DEFAULTS, validate: DEFAULTS.validate ? { ...DEFAULTS.validate } : undefined };
  let json: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const val = () => {
      const v = argv[++i];
      if (v === undefined) throw new UsageError(`${a} needs a value`);
      return v;
    };
    if (a === '--hosts') o.hosts = list(val())[0]!;
    else if (a === '--containers') o.containers = list(val());
    else if (a === '--rates') {
      const [c, q] = val().split(':').map(Number);
      if (!(c! > 0)) throw new UsageError('--rates CLAIMS:CANDIDATES, e.g. 2:4');
      o.claimsPerS = c!;
      o.candidatesPerS = q && q > 0 ? q : 2 * c!;
    } else if (a === '--duration') o.durationS = list(val())[0]!;
    else if (a === '--refresh') o.refreshPeriodS = list(val())[0]!;
    else if (a === '--lifetime') o.lifetimeS = list(val())[0]!;
    else if (a === '--baremetal') o.baremetalPerS = Number(val());
    else if (a === '--resync') o.resyncS = list(val())[0]!;
    else if (a === '--image-interval') o.imageIntervalS = Number(val());
    else if (a === '--no-deploy') o.deploy = false;
    else if (a === '--validate') {
      const [ks, cs] = val().split('@');
      o.validate = { containers: list(ks!), claimsPerS: list(cs ?? String(o.claimsPerS)) };
    } else if (a === '--no-validate') o.validate = undefined;
    else if (a === '--quick') Object.assign(o, { hosts: 40, containers: [1, 2], durationS: 20, lifetimeS: 8, validate: undefined });
    else if (a === '--json') json = val();
    else if (a === '--profile') o.profileFrom = val();
    else if (a === '--scenario') val();
    else if (a === '--help' || a === '-h') return { o, json, help: true };
    else throw new UsageError(`unknown option ${a}`);
  }
  return { o, json };
}
