/**
 * `berth` — the operators' command line (`npx berth …`, `npm run berth -- …`).
 * It talks to a Berth table directly, through the store modules (functions/store/),
 * not to the HTTP APIs:
 *   TABLE_NAME   the table (default berth)                      or --table NAME
 *   DDB_ENDPOINT DynamoDB Local's URL; unset for AWS              or --endpoint URL
 *   AWS_REGION   the table's region (AWS credentials as usual:   or --region R
 *                AWS_PROFILE, environment, instance role)
 */
import { fileURLToPath } from 'node:url';

const USAGE = `usage: berth [--table NAME] [--endpoint URL] [--region R] COMMAND [ARGS]

commands:
  tree [PROVIDER]                 the provider forest (or one provider's subtree) as text
  load FILE [--concurrency N]     bulk-load providers from YAML/JSON into an empty deployment
            [--force]             (custom classes/traits created first; see scripts/berth/load.ts)
  export [FILE|-]                 dump every item (DynamoDB JSON) to FILE or stdout
  import FILE                     restore a dump into an EMPTY table
  import-legacy FILE              import pre-1.8 allocations (no consumer records)
  migrate-consumers [--batch-size N] [--force]
                                  give legacy allocations consumer records (resumable)
  migrate-baremetal [--settle S]  switch bare metal to the placement scheduler: every node
                                  its resource provider, every allocation its consumer
                                  (resumable, idempotent; docs/design.md)
  history (--project P | --consumer C | --provider R | --all) [--from T] [--to T] [--at T]
          [--format csv|json]     the allocation history: intervals overlapping [from, to),
                                  or what was held at instant T (T: ISO 8601 or epoch ms)
  history billing [--project P] --from T --to T [--format csv|json]
                                  resource-hours per project and resource class
  help                            this text

environment: TABLE_NAME (default berth), DDB_ENDPOINT (DynamoDB Local; unset for AWS),
AWS_REGION and the usual AWS credentials.
`;

export async function main(argv: string[]): Promise<number> {
  // the AWS SDK's notice that it will want Node 22 is noise in an operator's terminal
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const args = [...argv];
  // global options (before the command) set the environment the store reads; no store
  // module is loaded before this point
  const GLOBAL: Record<string, string> = { '--table': 'TABLE_NAME', '--endpoint': 'DDB_ENDPOINT', '--region': 'AWS_REGION' };
  while (args[0] && GLOBAL[args[0]]) {
    const [flag, value] = args.splice(0, 2);
    if (value === undefined) throw new Error(`${flag} needs a value`);
    process.env[GLOBAL[flag!]!] = value;
  }
  const [cmd, ...rest] = args;
  if (process.env.DDB_ENDPOINT) process.env.AWS_REGION ??= 'local';
  // CloudWatch EMF metric lines are for Lambda
  process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
  process.env.LOG_LEVEL ??= 'WARN';
  switch (cmd) {
    case 'tree':
      return (await import('./berth/tree.js')).treeCommand(rest);
    case 'load':
      return (await import('./berth/load.js')).loadCommand(rest);
    case 'export':
      return (await import('./berth/dump.js')).exportCommand(rest);
    case 'import':
      return (await import('./berth/dump.js')).importCommand(rest);
    case 'import-legacy':
      return (await import('./berth/dump.js')).importLegacyCommand(rest);
    case 'migrate-consumers':
      return (await import('./migrate-consumers.js')).migrateConsumersCommand(rest);
    case 'migrate-baremetal':
      return (await import('./berth/migrate-baremetal.js')).migrateBaremetalCommand(rest);
    case 'history':
      return (await import('./berth/history.js')).historyCommand(rest);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE);
      return cmd === undefined ? 2 : 0;
    default:
      process.stderr.write(`berth: unknown command ${cmd}\n\n${USAGE}`);
      return 2;
  }
}

/** Run and set the exit code; failures print their message (and the stack with BERTH_DEBUG=1). */
export function run(argv: string[]): Promise<void> {
  return main(argv).then(
    (code) => {
      process.exitCode = code;
    },
    (e) => {
      process.stderr.write(`berth: ${(e as Error).message ?? e}\n`);
      if (process.env.BERTH_DEBUG) process.stderr.write(`${(e as Error).stack}\n`);
      process.exitCode = 1;
    },
  );
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) void run(process.argv.slice(2));
