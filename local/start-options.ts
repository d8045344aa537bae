/**
 * `npm start`'s command line (local/start.ts lists every option): parsed with node:util's
 * parseArgs through scripts/args.ts, each value checked, into the stack's Options.
 */
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FaultSpec } from './ddb-faults.js';
import { parseFaults } from './ddb-faults.js';
import { BAREMETAL_SCHEDULERS, parseRateLimit, type BaremetalScheduler } from '../functions/config.js';
import { commandLine, plainErrors, type OptionSpec } from '../scripts/args.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

export interface Options {
  fresh: boolean;
  placementPort: number;
  baremetalPort: number;
  ddbPort?: number;
  /** an existing DynamoDB to use instead of starting DynamoDB Local */
  ddbEndpoint?: string;
  /** the table (default: TABLE_NAME, else berth) */
  tableName?: string;
  /** put the fault and lag injector between the handlers and DynamoDB */
  ddbFaults?: FaultSpec;
  host: string;
  maintenanceInterval: number;
  dataDir: string;
  /** null disables the dashboard; 0 picks any free port */
  dashboardPort?: number | null;
  /** lift Lambda's 6 MB response limit (local only; AWS cannot) */
  noResponseLimit?: boolean;
  /** serve the handlers from this many child processes ("containers"); 1 (default): in this process, as before */
  containers?: number;
  /** child processes even for one container (the accountant measures every container alike) */
  childProcesses?: boolean;
  /** requests one container takes at a time (default 1, as a Lambda container; 0: no limit) */
  containerConcurrency?: number;
  /** environment for the containers, on top of the stack's */
  containerEnv?: Record<string, string | undefined>;
  /** drop the containers' output */
  quietContainers?: boolean;
  /** put the metering proxy between the handlers (or the fault injector) and DynamoDB */
  ddbMeter?: boolean;
  /** where bare-metal allocations find and reserve nodes (BAREMETAL_SCHEDULER) */
  baremetalScheduler?: BaremetalScheduler;
  /** a table of an earlier layout: migrate it in the background (default) or leave it to `npx berth migrate` */
  layoutMigration?: 'background' | 'manual';
  /** each caller's request budget per API (RATE_LIMIT, `RATE[:BURST]`): 429 with Retry-After beyond it */
  rateLimit?: string;
  /** run the change feed's stream processor and append its events to this file (./feed.ts); unset: none */
  eventsFile?: string;
}

const STRING = { type: 'string' } as const;
const SWITCH = { type: 'boolean' } as const;
const START_OPTIONS = {
  fresh: SWITCH,
  'placement-port': STRING,
  'baremetal-port': STRING,
  'ddb-port': STRING,
  'ddb-endpoint': STRING,
  table: STRING,
  'ddb-faults': STRING,
  host: STRING,
  'maintenance-interval': STRING,
  'data-dir': STRING,
  'dashboard-port': STRING,
  'no-dashboard': SWITCH,
  'no-response-limit': SWITCH,
  containers: STRING,
  'container-concurrency': STRING,
  'ddb-meter': SWITCH,
  'baremetal-scheduler': STRING,
  'rate-limit': STRING,
  'events-file': STRING,
  'no-events': SWITCH,
  help: { type: 'boolean', short: 'h' },
} satisfies Record<string, OptionSpec>;

export function parseArgs(argv: string[]): Options {
  const o: Options = {
    fresh: false,
    placementPort: Number(process.env.PLACEMENT_PORT ?? 8778),
    baremetalPort: Number(process.env.BAREMETAL_PORT ?? 6385),
    host: process.env.BERTH_HOST ?? '127.0.0.1',
    maintenanceInterval: Number(process.env.MAINTENANCE_INTERVAL_S ?? 60),
    dataDir: process.env.BERTH_DATA_DIR ?? join(ROOT, '.data', 'ddb'),
    dashboardPort: process.env.DASHBOARD_PORT === undefined ? undefined : Number(process.env.DASHBOARD_PORT),
    ddbEndpoint: process.env.BERTH_DDB_ENDPOINT || undefined,
    ddbFaults: process.env.BERTH_DDB_FAULTS ? parseFaults(process.env.BERTH_DDB_FAULTS) : undefined,
    baremetalScheduler: process.env.BAREMETAL_SCHEDULER ? scheduler('BAREMETAL_SCHEDULER', process.env.BAREMETAL_SCHEDULER) : undefined,
    eventsFile: process.env.BERTH_EVENTS_FILE || join(ROOT, '.data', 'events.jsonl'),
  };
  const set: Record<keyof typeof START_OPTIONS, (v: string, flag: string) => void> = {
    fresh: () => (o.fresh = true),
    'placement-port': (v) => (o.placementPort = Number(v)),
    'baremetal-port': (v) => (o.baremetalPort = Number(v)),
    'ddb-port': (v, flag) => (o.ddbPort = port(flag, v)),
    'ddb-endpoint': (v) => (o.ddbEndpoint = endpointUrl(v)),
    table: (v) => (o.tableName = v),
    'ddb-faults': (v) => (o.ddbFaults = parseFaults(v)),
    host: (v) => (o.host = v),
    'maintenance-interval': (v) => (o.maintenanceInterval = Number(v)),
    'data-dir': (v) => (o.dataDir = v),
    'dashboard-port': (v) => (o.dashboardPort = Number(v)),
    'no-dashboard': () => (o.dashboardPort = null),
    'no-response-limit': () => (o.noResponseLimit = true),
    containers: (v, flag) => (o.containers = count(flag, v, 1)),
    'container-concurrency': (v, flag) => (o.containerConcurrency = count(flag, v, 0)),
    'ddb-meter': () => (o.ddbMeter = true),
    'baremetal-scheduler': (v, flag) => (o.baremetalScheduler = scheduler(flag, v)),
    'rate-limit': (v, flag) => (o.rateLimit = rateLimit(flag, v)),
    'events-file': (v) => (o.eventsFile = v),
    'no-events': () => (o.eventsFile = undefined),
    help: () => {
      process.stdout.write(
        [
          'usage: npm start -- [--fresh] [--placement-port N] [--baremetal-port N] [--dashboard-port N | --no-dashboard] [--host H] [--maintenance-interval S] [--no-response-limit]',
          '                    [--ddb-port N | --ddb-endpoint URL] [--table NAME] [--ddb-faults SPEC] [--ddb-meter]',
          '                    [--containers K] [--container-concurrency N] [--baremetal-scheduler database|placement] [--rate-limit RATE[:BURST]]',
          '                    [--events-file F | --no-events]',
          '  --ddb-endpoint URL   use an existing DynamoDB (LocalStack, DynamoDB Local in a container, ...); the table is created if missing',
          '  --ddb-faults SPEC    DynamoDB fault and lag injector, e.g. rate=0.05,lag=500,seed=7 (see local/ddb-faults.ts)',
          '  --ddb-meter          record every DynamoDB call and the units AWS would bill; a summary per request type at exit',
          '  --containers K       K processes serve the handlers (each like a Lambda container) behind a round-robin front',
          '  --container-concurrency N  requests one container takes at a time (default 1, as Lambda; 0: no limit)',
          '  --events-file F       the change feed: every committed change as one JSON line (default .data/events.jsonl;',
          '                       emptied with --fresh); --no-events: no stream processor',
          '  --baremetal-scheduler database|placement',
          '                       where bare-metal allocations find and reserve nodes (default database; placement',
          '                       makes every node a resource provider and migrates the table first)',
          '  --rate-limit RATE[:BURST]  each caller (project) may make RATE requests a second, BURST at once, per API;',
          "                       beyond it a 429 in the API's own format with Retry-After (as -c projectRateLimit in AWS)",
          '',
        ].join('\n'),
      );
      process.exit(0);
    },
  };
  // in order: a later flag overrides an earlier one (--events-file F --no-events)
  for (const { name, flag, value } of commandLine(argv, START_OPTIONS, plainErrors()).options)
    set[name as keyof typeof START_OPTIONS](value ?? '', flag);
  if (o.ddbEndpoint && o.ddbPort !== undefined)
    throw new Error('--ddb-port starts DynamoDB Local on that port; --ddb-endpoint uses an existing one: give one of them');
  if (o.ddbEndpoint && o.fresh)
    throw new Error('--fresh empties the DynamoDB Local that npm start runs; with --ddb-endpoint use a new --table instead');
  return o;
}

function rateLimit(flag: string, v: string): string {
  if (!parseRateLimit(v)) throw new Error(`${flag} ${v}: expected RATE[:BURST] (requests a second, burst), e.g. 5:10`);
  return v;
}

function count(flag: string, v: string, min: number): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new Error(`${flag} ${v}: a whole number >= ${min} expected`);
  return n;
}

function scheduler(flag: string, v: string): BaremetalScheduler {
  if (!(BAREMETAL_SCHEDULERS as readonly string[]).includes(v)) throw new Error(`${flag} ${v}: expected one of ${BAREMETAL_SCHEDULERS.join(', ')}`);
  return v as BaremetalScheduler;
}

function port(flag: string, v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`${flag} ${v} is not a port number`);
  return n;
}

function endpointUrl(v: string): string {
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new Error(`--ddb-endpoint ${v} is not a URL (e.g. http://127.0.0.1:8000)`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`--ddb-endpoint ${v}: http:// or https:// expected`);
  return v.replace(/\/+$/, '');
}

/** Is something already listening on 127.0.0.1:port? (DynamoDB Local would fail to bind, and we would talk to whatever is there) */
