/**
 * `npm run bench -- --scenario capacity [--hosts N --containers 1,2 --rates 2:4 --duration S ...]`:
 * the accountant (measure/accountant/accountant.ts, also `npm run accountant`), with the same
 * options. It starts its own DynamoDB Local and K containers per run behind the metering
 * proxy; the stack the bench started for the scenario is not used.
 */
import type { Scenario } from '../kit.js';
import { ACCOUNTANT_OPTIONS, parseAccountantArgs } from '../../measure/accountant/args.js';
import { runAccountant } from '../../measure/accountant/accountant.js';

export const capacityScenario: Scenario = {
  name: 'capacity',
  description:
    'the accountant: a Nova-like workload on K containers behind the metering proxy; units per request type, hottest keys, the projection model validated and projected to 1k / 100k / 1M providers with monthly cost (docs/cost.md)',
  optional: true,
  // the accountant's, but for the bench's own --scenario, --json, --quick and --help
  options: Object.fromEntries(Object.entries(ACCOUNTANT_OPTIONS).filter(([k]) => !['scenario', 'json', 'quick', 'help'].includes(k))),
  async run(ctx) {
    const argv = Object.entries(ctx.args)
      .filter(([k]) => !['scenario', 'json', 'quick'].includes(k))
      .flatMap(([k, v]) => (v === 'true' ? [`--${k}`] : [`--${k}`, v]));
    if (ctx.quick) argv.push('--quick');
    const { o } = parseAccountantArgs(argv);
    await runAccountant(o, { say: (line) => ctx.say(line), emit: (record) => ctx.emit(record) });
  },
};
