/**
 * The shared Placement perf harness (/work/shared/perf/run) against this stack's
 * Placement URL, for the scenarios that exercise claims: load (creates the providers
 * through the API), claims, contention, race, usages. Its JSON lines are re-emitted
 * (tagged with this scenario) and its human lines echoed. `claims` takes its
 * allocation requests from GET /allocation_candidates, so it needs that family.
 *   npm run bench -- --scenario perf-harness [--quick] [--providers N]
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { VALUE, sharedPath, type BenchContext, type Scenario } from '../kit.js';

/** the shared harness sits beside the repository (../shared/perf/run, or under BERTH_SHARED), as in CI */
const HARNESS = process.env.PERF_HARNESS ?? sharedPath('perf', 'run');

async function run(ctx: BenchContext, scenarios = 'load,claims,contention,race,usages') {
  if (!existsSync(HARNESS)) {
    ctx.say(`perf harness not found at ${HARNESS} (set PERF_HARNESS): skipped`);
    ctx.emit({ kind: 'error', key: 'perf-harness/missing', harness: HARNESS });
    return;
  }
  const providers = ctx.args.providers ?? (ctx.quick ? '100' : '1000');
  const args = ['--url', ctx.stack.placementUrl, '--label', 'berth', '--providers', providers, '--scenario', scenarios];
  if (ctx.quick) args.push('--quick');
  ctx.say(`${HARNESS} ${args.join(' ')}`);
  const code = await new Promise<number>((resolve, reject) => {
    const child = spawn(HARNESS, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let buf = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buf += chunk.toString();
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.startsWith('{')) {
          try {
            ctx.emit({ harness: JSON.parse(line) });
            continue;
          } catch {
            // not JSON after all: print it
          }
        }
        if (line.trim()) ctx.say(line.replace(/^#\s?/, ''));
      }
    });
    child.stderr.on('data', (chunk: Buffer) => process.stderr.write(chunk));
    child.on('error', reject);
    child.on('exit', (c) => resolve(c ?? 1));
  });
  ctx.say(`perf harness exited with ${code}${code === 1 ? ' (a check FAILed or a scenario could not run: see above)' : ''}`);
}

export const perfHarnessScenario: Scenario = {
  name: 'perf-harness',
  options: { providers: VALUE },
  description: 'the shared harness (load, claims, contention, race, usages) against the local Placement URL',
  run: (ctx) => run(ctx),
};

/** The harness's candidate scenarios, for figures directly comparable with upstream's. */
export const perfHarnessCandidatesScenario: Scenario = {
  name: 'perf-harness-candidates',
  options: { providers: VALUE },
  description: 'the shared harness (load, candidates, scale, nested, widetree) against the local Placement URL',
  run: (ctx) => run(ctx, 'load,candidates,scale,nested,widetree'),
  optional: true,
};
