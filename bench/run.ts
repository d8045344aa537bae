/**
 * `npm run bench [-- --scenario a,b] [--quick] [--json out.jsonl] [--baremetal-scheduler database|placement]`
 * Measures Berth on this machine against the local stack (DynamoDB Local + the real
 * handlers behind the API Gateway adapter). Each scenario gets a freshly started, empty
 * stack. Figures are printed as `# ...` human lines and JSON lines (also appended to
 * --json). Scenarios live in bench/scenarios/ and are listed in bench/scenarios/index.ts;
 * their types and shared helpers (clients, pool, percentiles) are in bench/kit.ts.
 */
import './env.js';
import { appendFileSync } from 'node:fs';
import { freePort } from '../local/ddb-local.js';
import { startStack } from '../local/start.js';
import type { BenchContext } from './kit.js';
import { SCENARIOS } from './scenarios/index.js';
import { commandLine, plainErrors, type OptionSpec } from '../scripts/args.js';

/** the bench's own options; each scenario declares the ones it reads (Scenario.options) */
const BENCH_OPTIONS: Record<string, OptionSpec> = {
  scenario: { type: 'string' },
  quick: { type: 'boolean' },
  json: { type: 'string' },
  'baremetal-scheduler': { type: 'string' },
};

/** the command line as `ctx.args` has it: every value a string, a switch 'true' */
function parse(argv: string[]): Record<string, string> {
  const options = Object.assign({}, ...SCENARIOS.map((s) => s.options ?? {}), BENCH_OPTIONS);
  const { values } = commandLine(argv, options, plainErrors());
  return Object.fromEntries(Object.entries(values).map(([k, v]) => [k, String(v)]));
}

async function main() {
  const args = parse(process.argv.slice(2));
  const wanted = args.scenario ? args.scenario.split(',') : SCENARIOS.filter((s) => !s.optional).map((s) => s.name);
  const unknown = wanted.filter((w) => !SCENARIOS.some((s) => s.name === w));
  if (unknown.length) throw new Error(`unknown scenario(s) ${unknown.join(', ')}; known: ${SCENARIOS.map((s) => s.name).join(', ')}`);
  for (const s of SCENARIOS.filter((x) => wanted.includes(x.name))) {
    const stack = await startStack({
      fresh: true,
      placementPort: await freePort(),
      baremetalPort: await freePort(),
      host: '127.0.0.1',
      maintenanceInterval: 0,
      dataDir: '',
      dashboardPort: null,
      // scenarios measure the solver on answers of any size; coldstart runs its own processes with AWS's limit
      noResponseLimit: true,
      // the bare-metal race in either mode (docs/baremetal.md, "Bare metal through Placement")
      baremetalScheduler: args['baremetal-scheduler'] === 'placement' ? 'placement' : undefined,
    });
    const ctx: BenchContext = {
      stack,
      quick: args.quick === 'true',
      args,
      emit(record) {
        const line = JSON.stringify({ scenario: s.name, ...record });
        process.stdout.write(line + '\n');
        if (args.json) appendFileSync(args.json, line + '\n');
      },
      say(line) {
        process.stdout.write(`# ${line}\n`);
      },
    };
    ctx.say(`== ${s.name}: ${s.description}`);
    const t0 = Date.now();
    try {
      await s.run(ctx);
    } finally {
      await stack.stop();
    }
    ctx.say(`== ${s.name} done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }
}

main().catch((e) => {
  process.stderr.write(`${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
