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
import { leadingOptions, plainErrors } from '../scripts/args.js';

const STRING = { type: 'string' } as const;

const USAGE = `usage: berth [--table NAME] [--endpoint URL] [--region R] COMMAND [ARGS]

commands:
  tree [PROVIDER]                 the provider forest (or one provider's subtree) as text
  load FILE [--concurrency N]     bulk-load providers from YAML/JSON into an empty deployment
            [--force]             (custom classes/traits created first; see cli/load.ts)
  export [FILE|-]                 dump every item (DynamoDB JSON) to FILE or stdout
  import FILE                     restore a dump into an EMPTY table
  import-legacy FILE              import pre-1.8 allocations (no consumer records)
  migrate-consumers [--batch-size N] [--force]
                                  give legacy allocations consumer records (resumable)
  image [--every S --for S]       write a forest image now; or one whenever the forest
                                  changed, every S seconds for a while (default 5 and 600):
                                  a large cloud's deploy window (docs/cost.md)
  migrate [--status]              migrate the table to this release's item layout now
                                  (resumable, idempotent; after the previous release is gone)
  migrate-baremetal [--settle S]  switch bare metal to the placement scheduler: every node
                                  its resource provider, every allocation its consumer
                                  (resumable, idempotent; docs/baremetal.md)
  import-placement --from URL [--token T] [--final] [--concurrency N] [--accept-losses]
                                  a running Placement's state into this table through its
                                  API, in passes: each copies what changed (by generation);
                                  --final, with the source's writes frozen, makes it exact
                                  (resumable, idempotent; refuses a table it did not write)
  verify-placement --against URL [--token T] [--berth URL] [--ignore-generations]
                                  compare every provider, inventory, trait, aggregate, usage
                                  and consumer the source and Berth show; exit 1 on any difference
  export-placement --to URL [--token T] [--concurrency N]
                                  replay this table's Placement state into an EMPTY Placement
                                  (its generations start again)
  import-ironic [--from URL] [--token T] [--scheduler database|placement]
                [--concurrency N] [--dry-run]
                                  move in from a running Ironic through its API: nodes and
                                  allocations (refused, with the list, while any is in the
                                  middle of something); into an empty table, or resuming its
                                  own earlier pass (idempotent)
  verify-ironic [--from URL] [--token T] [--berth URL [--berth-token T]]
                                  compare every node and allocation through both APIs, field
                                  by field; exit 1 on any difference
  history (--project P | --consumer C | --provider R | --all) [--from T] [--to T] [--at T]
          [--format csv|json]     the allocation history: intervals overlapping [from, to),
                                  or what was held at instant T (T: ISO 8601 or epoch ms)
  history billing [--project P] --from T --to T [--format csv|json]
                                  resource-hours per project and resource class
  help                            this text

environment: TABLE_NAME (default berth), DDB_ENDPOINT (DynamoDB Local; unset for AWS),
AWS_REGION and the usual AWS credentials. The Placement and Ironic commands take the other
side's credentials as the OpenStack clients do: --token, OS_AUTH_TYPE=none with --from
(or OS_ENDPOINT), OS_AUTH_TYPE=admin_token with OS_TOKEN, OS_CLOUD (clouds.yaml), or
OS_AUTH_URL / OS_USERNAME / OS_PASSWORD / OS_PROJECT_NAME (or OS_SYSTEM_SCOPE=all), the
endpoint then from the catalog (placement, baremetal) unless --from / --to names it.
`;

export async function main(argv: string[]): Promise<number> {
  // global options (before the command) set the environment the store reads; no store
  // module is loaded before this point
  const GLOBAL: Record<string, string> = { table: 'TABLE_NAME', endpoint: 'DDB_ENDPOINT', region: 'AWS_REGION' };
  const global = leadingOptions(argv, { table: STRING, endpoint: STRING, region: STRING }, plainErrors());
  for (const [name, value] of Object.entries(global.values)) process.env[GLOBAL[name]!] = value;
  const [cmd, ...rest] = global.rest;
  if (process.env.DDB_ENDPOINT) process.env.AWS_REGION ??= 'local';
  // CloudWatch EMF metric lines are for Lambda
  process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
  process.env.LOG_LEVEL ??= 'WARN';
  // commands that work on Placement's items through the store need a table in a layout
  // this release serves (recorded first if it has no record: docs/items.md, "Layout versions")
  if (cmd && LAYOUT_BOUND.has(cmd)) await requireServedLayout();
  switch (cmd) {
    case 'tree':
      return (await import('./tree.js')).treeCommand(rest);
    case 'load':
      return (await import('./load.js')).loadCommand(rest);
    case 'export':
      return (await import('./dump.js')).exportCommand(rest);
    case 'import':
      return (await import('./dump.js')).importCommand(rest);
    case 'import-legacy':
      return (await import('./dump.js')).importLegacyCommand(rest);
    case 'migrate-consumers':
      return (await import('./migrate-consumers.js')).migrateConsumersCommand(rest);
    case 'migrate':
      return (await import('./migrate.js')).migrateCommand(rest);
    case 'image':
      return (await import('./image.js')).imageCommand(rest);
    case 'migrate-baremetal':
      return (await import('./migrate-baremetal.js')).migrateBaremetalCommand(rest);
    case 'import-ironic':
      return (await import('./import-ironic.js')).importIronicCommand(rest);
    case 'verify-ironic':
      return (await import('./verify-ironic.js')).verifyIronicCommand(rest);
    case 'import-placement':
      return (await import('./import-placement.js')).importPlacementCommand(rest);
    case 'verify-placement':
      return (await import('./verify-placement.js')).verifyPlacementCommand(rest);
    case 'export-placement':
      return (await import('./export-placement.js')).exportPlacementCommand(rest);
    case 'history':
      return (await import('./history.js')).historyCommand(rest);
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

/** commands that read or write the table through the store (its layout must be one this release serves) */
const LAYOUT_BOUND = new Set([
  'tree',
  'load',
  'image',
  'import-legacy',
  'migrate-consumers',
  'migrate-baremetal',
  'import-placement',
  'verify-placement',
  'export-placement',
  'import-ironic',
  'verify-ironic',
]);

async function requireServedLayout(): Promise<void> {
  const { ensureLayout } = await import('../functions/store/layout/state.js');
  const { verdict } = await import('../functions/core/layout.js');
  const v = verdict(await ensureLayout());
  if (!v.serve) throw new Error(`${v.message}${v.permanent ? '' : ' (`npx berth migrate` migrates it now)'}`);
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
