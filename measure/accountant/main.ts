/**
 * `npm run accountant -- [--hosts N] [--containers 1,2,4,8] [--rates CLAIMS:CANDIDATES]
 *                        [--duration S] [--refresh S] [--resync S] [--image-interval S] [--no-deploy]
 *                        [--validate K1,K2@C1,C2 | --no-validate] [--quick] [--json out.jsonl] [--profile saved.jsonl]`
 * The accountant (measure/accountant/accountant.ts): per request type the DynamoDB units AWS
 * would bill, the hottest keys, the projection model validated against runs at other
 * container counts and write rates, and the three cloud sizes of docs/cost.md with their
 * monthly cost. Also `npm run bench -- --scenario capacity`. --profile projects again from the
 * profile an earlier run saved in its --json file, without measuring.
 */
import '../../bench/env.js';
import { appendFileSync } from 'node:fs';
import { runAccountant } from './accountant.js';
import { ACCOUNTANT_USAGE, parseAccountantArgs, UsageError } from './args.js';

async function main() {
  const { o, json, help } = parseAccountantArgs(process.argv.slice(2));
  if (help) {
    process.stdout.write(`${ACCOUNTANT_USAGE}\n`);
    return;
  }
  await runAccountant(o, {
    say: (line) => process.stdout.write(`${line}\n`),
    emit: (record) => {
      if (json) appendFileSync(json, `${JSON.stringify({ scenario: 'capacity', ...record })}\n`);
    },
  });
}

main().catch((e) => {
  if (e instanceof UsageError) {
    process.stderr.write(`${e.message}\n${ACCOUNTANT_USAGE}\n`);
    process.exit(2);
  }
  process.stderr.write(`${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
