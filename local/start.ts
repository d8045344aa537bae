/**
 * `npm start`: the whole of Berth on this machine, with the real pieces.
 *   DynamoDB Local (data in .data/ddb unless --fresh) -> the table
 *     or an existing DynamoDB (--ddb-endpoint URL: LocalStack, DynamoDB Local in a
 *     container, ...): no jar is started, the table is created if missing
 *   optionally the fault and lag injector in between (--ddb-faults SPEC, ./ddb-faults.ts)
 *   Placement's Lambda handlers behind the payload-v2 HTTP adapter (127.0.0.1:8778)
 *   the bare-metal API's handlers (127.0.0.1:6385), the allocation state machine run
 *   locally from its ASL file, the scheduled maintenance function on a timer.
 *   With --containers K (K > 1) the handlers run in K child processes, each like a Lambda
 *   container (own module state, own provider snapshot), behind a round-robin front on
 *   the same ports (./containers.ts); container 0 runs the maintenance timer.
 *   Optionally the metering proxy (--ddb-meter, measure/meter/): every DynamoDB call and
 *   the units AWS would bill, summed per request type when the stack stops.
 * Options: --fresh, --placement-port N, --baremetal-port N, --dashboard-port N, --ddb-port N,
 *          --ddb-endpoint URL, --table NAME, --ddb-faults SPEC, --ddb-meter,
 *          --containers K, --container-concurrency N (requests one container takes at a time; 0: any),
 *          --host H, --maintenance-interval SECONDS (0 disables),
 *          --no-response-limit (lift Lambda's 6 MB answer limit, which applies by default as in AWS),
 *          --baremetal-scheduler database|placement (BAREMETAL_SCHEDULER; placement migrates the table first),
 *          --rate-limit RATE[:BURST] (RATE_LIMIT: each caller's token bucket, as -c projectRateLimit in AWS),
 *          --events-file F (the change feed's events, one JSON line each; default .data/events.jsonl), --no-events
 * SIGINT / SIGTERM stop every child.
 */
import type { Server } from 'node:http';
import { connect, createServer } from 'node:net';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startDynamoDbLocal, ensureTable, type DdbLocal } from './ddb-local.js';
import type { LayoutRun } from './layout.js';
import { describeFaults, parseFaults, startFaultProxy, type FaultProxy, type FaultSpec } from './ddb-faults.js';
import { startMeterProxy, type MeterProxy } from '../measure/meter/proxy.js';
import { meterSummary } from '../measure/report.js';
import type { ContainerSet } from './containers.js';
import { BAREMETAL_SCHEDULERS, parseRateLimit, type BaremetalScheduler } from '../functions/config.js';
import { closeServers } from './servers.js';
import type { LocalFeed } from './feed.js';
import { commandLine, plainErrors, type OptionSpec } from '../scripts/args.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

interface Options {
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
export async function portInUse(port: number, host = '127.0.0.1'): Promise<boolean> {
  const answers = await new Promise<boolean>((resolve) => {
    const sock = connect({ port, host });
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
    sock.setTimeout(1000, () => {
      sock.destroy();
      resolve(false);
    });
  });
  if (answers) return true;
  return new Promise<boolean>((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(true));
    srv.listen(port, '0.0.0.0', () => srv.close(() => resolve(false)));
  });
}

export interface RunningStack {
  /** the DynamoDB Local this stack started (none with --ddb-endpoint) */
  ddb?: DdbLocal;
  /** the DynamoDB the table lives in */
  ddbEndpoint: string;
  /** the endpoint the handlers talk to: the fault injector's when it runs, else the meter's, else ddbEndpoint */
  handlerEndpoint: string;
  tableName: string;
  faults?: FaultProxy;
  meter?: MeterProxy;
  /** the child processes serving the handlers (with --containers K) */
  containers?: ContainerSet;
  /** a table of an earlier layout migrating in the background (./layout.ts) */
  layout?: LayoutRun;
  /** the change feed's stream processor (with eventsFile) */
  feed?: LocalFeed;
  servers: Server[];
  placementUrl: string;
  baremetalUrl: string;
  dashboardUrl: string;
  stop(): Promise<void>;
}

/** Start everything; used by `npm start`, the integration tests and the benchmarks. */
export async function startStack(o: Options): Promise<RunningStack> {
  if (!o.ddbEndpoint && o.ddbPort && (await portInUse(o.ddbPort))) {
    throw new Error(
      `--ddb-port ${o.ddbPort}: the port is in use (is a DynamoDB already running there?). Choose a free port, or use that database with --ddb-endpoint http://127.0.0.1:${o.ddbPort}`,
    );
  }
  const ddb = o.ddbEndpoint ? undefined : await startDynamoDbLocal({ port: o.ddbPort, dataDir: o.fresh ? undefined : o.dataDir });
  const ddbEndpoint = o.ddbEndpoint ?? ddb!.endpoint;
  const tableName = o.tableName ?? process.env.TABLE_NAME ?? 'berth';
  process.env.TABLE_NAME = tableName;
  process.env.AWS_REGION ??= 'local';
  if (o.noResponseLimit) process.env.MAX_RESPONSE_BYTES = '0';
  if (o.baremetalScheduler) process.env.BAREMETAL_SCHEDULER = o.baremetalScheduler;
  if (o.rateLimit) process.env.RATE_LIMIT = o.rateLimit;
  // CloudWatch EMF metric lines are for Lambda; locally they would only be noise
  process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
  let faults: FaultProxy | undefined;
  let meter: MeterProxy | undefined;
  let containers: ContainerSet | undefined;
  let layoutRun: LayoutRun | undefined;
  try {
    // the stream only where the change feed reads it (DynamoDB Local writes each record on one thread)
    await ensureTable(ddbEndpoint, tableName, process.env.AWS_REGION, { stream: !!o.eventsFile });
    // handlers -> fault injector -> meter -> DynamoDB: the meter bills what reaches DynamoDB
    if (o.ddbMeter) meter = await startMeterProxy(ddbEndpoint);
    if (o.ddbFaults) faults = await startFaultProxy(meter?.endpoint ?? ddbEndpoint, o.ddbFaults);
    const handlerEndpoint = faults?.endpoint ?? meter?.endpoint ?? ddbEndpoint;
    process.env.DDB_ENDPOINT = handlerEndpoint;
    // handlers read their environment when first used: import them only now
    const { resetConfig } = await import('../functions/config.js');
    resetConfig();
    // a table written by an earlier release's layout migrates while it is served (./layout.ts)
    const { startLayoutMigration } = await import('./layout.js');
    layoutRun = await startLayoutMigration({ background: o.layoutMigration !== 'manual' });
    // a table switched to the placement scheduler is migrated before anything is served
    // (as the maintenance task or `npx berth migrate-baremetal` does it in AWS)
    if (process.env.BAREMETAL_SCHEDULER === 'placement') {
      const { migrateNodesToPlacement } = await import('../functions/bridge/migration.js');
      await migrateNodesToPlacement({ deadline: Number.POSITIVE_INFINITY });
    }
    const servers: Server[] = [];
    const stopServers = () => Promise.all(servers.map((srv) => new Promise((r) => srv.close(r))));
    let placementUrl: string;
    let baremetalUrl: string;
    let timer: NodeJS.Timeout | undefined;
    if ((o.containers ?? 1) > 1 || o.childProcesses) {
      const { startContainers } = await import('./containers.js');
      const { placementMalformed } = await import('../functions/placement/framework/malformed.js');
      containers = await startContainers({
        count: o.containers ?? 1,
        concurrency: o.containerConcurrency ?? 1,
        host: o.host,
        placementPort: o.placementPort,
        baremetalPort: o.baremetalPort,
        maintenanceInterval: o.maintenanceInterval,
        env: {
          DDB_ENDPOINT: handlerEndpoint,
          TABLE_NAME: tableName,
          AWS_REGION: process.env.AWS_REGION,
          // the children listen on 127.0.0.1 behind the front: the name the front was bound to stays allowed
          BERTH_ALLOWED_HOSTS: [process.env.BERTH_ALLOWED_HOSTS, o.host].filter(Boolean).join(','),
          // a child's output is a pipe: keep the readable lines a terminal shows
          ...(process.stdout.isTTY && !process.env.LOG_FORMAT ? { LOG_FORMAT: 'text' } : {}),
          ...(o.containerEnv ?? {}),
        },
        quiet: o.quietContainers,
        malformed: { placement: placementMalformed },
      });
      placementUrl = containers.placementUrl;
      baremetalUrl = containers.baremetalUrl;
    } else {
      // handlers read their environment when first used: import them only now
      const { resetConfig } = await import('../functions/config.js');
      resetConfig();
      const { servePlacement, serveBaremetal } = await import('./apis.js');
      try {
        const p = await servePlacement(o.placementPort, o.host);
        servers.push(p);
        placementUrl = `http://${o.host}:${(p.address() as { port: number }).port}`;
        const b = await serveBaremetal(o.baremetalPort, o.host);
        servers.push(b);
        baremetalUrl = `http://${o.host}:${(b.address() as { port: number }).port}`;
      } catch (e) {
        await stopServers();
        throw e;
      }
      if (o.maintenanceInterval > 0) {
        const { runMaintenance } = await import('../functions/maintenance/handler.js');
        timer = setInterval(() => {
          runMaintenance().catch((e: Error) => process.stderr.write(`[berth] maintenance failed: ${e.stack ?? e}\n`));
        }, o.maintenanceInterval * 1000);
        timer.unref();
      }
    }
    // the change feed: the stream processor over DynamoDB's stream (in this process, whatever the containers)
    let feed: LocalFeed | undefined;
    if (o.eventsFile) {
      const { startLocalFeed } = await import('./feed.js');
      if (o.fresh) {
        const { rmSync } = await import('node:fs');
        for (const f of [o.eventsFile, `${o.eventsFile}.checkpoint.json`]) rmSync(f, { force: true });
      }
      feed = await startLocalFeed({ endpoint: ddbEndpoint, table: tableName, region: process.env.AWS_REGION, eventsFile: o.eventsFile });
    }
    let dashboardUrl = '';
    // default: 8780 next to the default ports; any free port when the API ports were chosen
    const dashPort = o.dashboardPort === undefined ? (o.placementPort === 8778 ? 8780 : 0) : o.dashboardPort;
    if (dashPort !== null) {
      const { serveDashboard } = await import('./dashboard.js');
      const d = await serveDashboard({ port: dashPort, host: o.host, placementUrl, baremetalUrl, eventsFile: o.eventsFile });
      servers.push(d);
      dashboardUrl = `http://${o.host}:${(d.address() as { port: number }).port}`;
    }
    const stop = async () => {
      if (timer) clearInterval(timer);
      layoutRun?.stop();
      await closeServers(servers);
      await containers?.stop();
      // what the stream still holds of the last writes goes out before the database stops
      await feed?.drain().catch(() => undefined);
      await feed?.stop();
      await faults?.stop();
      await meter?.stop();
      await ddb?.stop();
    };
    return {
      ddb,
      ddbEndpoint,
      handlerEndpoint,
      tableName,
      faults,
      meter,
      containers,
      layout: layoutRun,
      feed,
      servers: [...(containers?.servers ?? []), ...servers],
      placementUrl,
      baremetalUrl,
      dashboardUrl,
      stop,
    };
  } catch (e) {
    layoutRun?.stop();
    await containers?.stop();
    await faults?.stop();
    await meter?.stop();
    await ddb?.stop();
    throw e;
  }
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const t0 = Date.now();
  const stack = await startStack(o);
  const lines = [
    `[berth] Placement API   ${stack.placementUrl}  (x-auth-token: admin)`,
    `[berth] Bare metal API  ${stack.baremetalUrl}`,
    stack.dashboardUrl ? `[berth] Dashboard       ${stack.dashboardUrl}` : '[berth] Dashboard       (disabled)',
    stack.ddb
      ? `[berth] DynamoDB Local  ${stack.ddb.endpoint}  table ${stack.tableName}  (${o.fresh ? 'in memory, fresh' : `data in ${o.dataDir}`})`
      : `[berth] DynamoDB        ${stack.ddbEndpoint}  table ${stack.tableName}  (existing endpoint)`,
    ...(stack.faults ? [`[berth] fault injector  ${stack.faults.endpoint}  ${describeFaults(stack.faults.spec)}`] : []),
    ...(stack.meter ? [`[berth] DynamoDB meter   ${stack.meter.endpoint}  (units per request type at exit)`] : []),
    ...(stack.feed ? [`[berth] change feed     ${stack.feed.eventsFile}  (one JSON line per committed change)`] : []),
    ...(stack.containers
      ? [
          `[berth] containers      ${stack.containers.containers.map((c) => `${c.id}`).join(' ')}  (round robin, ${o.containerConcurrency ?? 1} request(s) each at a time)`,
        ]
      : []),
    `[berth] ready in ${((Date.now() - t0) / 1000).toFixed(1)} s; Ctrl-C stops everything`,
  ];
  process.stdout.write(lines.join('\n') + '\n');
  let stopping = false;
  const shutdown = async (sig: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`[berth] ${sig}: stopping\n`);
    if (stack.meter) process.stdout.write(meterSummary(stack.meter.records));
    await stack.stop().catch(() => undefined);
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGHUP', () => void shutdown('SIGHUP'));
  for (const c of stack.containers?.containers ?? []) {
    c.child.once('exit', (code, signal) => {
      if (!stopping) process.stderr.write(`[berth] container ${c.id} exited (${code ?? signal}); the others serve on\n`);
    });
  }
  stack.ddb?.child.once('exit', (code) => {
    if (!stopping) {
      process.stderr.write(`[berth] DynamoDB Local exited unexpectedly (${code}); stopping\n`);
      void shutdown('ddb-exit');
    }
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((e) => {
    process.stderr.write(`[berth] failed to start: ${(e as Error).stack ?? e}\n`);
    process.exit(1);
  });
}
