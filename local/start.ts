/**
 * `npm start`: the whole of Berth on this machine, with the real pieces.
 *   DynamoDB Local (data in .data/ddb unless --fresh) -> the table
 *     or an existing DynamoDB (--ddb-endpoint URL: LocalStack, DynamoDB Local in a
 *     container, ...): no jar is started, the table is created if missing
 *   optionally the fault and lag injector in between (--ddb-faults SPEC, ./ddb-faults.ts)
 *   Placement's Lambda handlers behind the payload-v2 HTTP adapter (127.0.0.1:8778)
 *   the bare-metal API's handlers (127.0.0.1:6385), the allocation state machine run
 *   locally from its ASL file, the scheduled maintenance function on a timer.
 * Options: --fresh, --placement-port N, --baremetal-port N, --dashboard-port N, --ddb-port N,
 *          --ddb-endpoint URL, --table NAME, --ddb-faults SPEC,
 *          --host H, --maintenance-interval SECONDS (0 disables),
 *          --no-response-limit (lift Lambda's 6 MB answer limit, which applies by default as in AWS),
 *          --baremetal-scheduler database|placement (BAREMETAL_SCHEDULER; placement migrates the table first)
 * SIGINT / SIGTERM stop every child.
 */
import type { Server } from 'node:http';
import { connect, createServer } from 'node:net';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startDynamoDbLocal, ensureTable, type DdbLocal } from './ddb-local.js';
import { describeFaults, parseFaults, startFaultProxy, type FaultProxy, type FaultSpec } from './ddb-faults.js';
import { BAREMETAL_SCHEDULERS, type BaremetalScheduler } from '../functions/config.js';

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
  /** where bare-metal allocations find and reserve nodes (BAREMETAL_SCHEDULER) */
  baremetalScheduler?: BaremetalScheduler;
}

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
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const val = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--fresh') o.fresh = true;
    else if (a === '--placement-port') o.placementPort = Number(val());
    else if (a === '--baremetal-port') o.baremetalPort = Number(val());
    else if (a === '--ddb-port') o.ddbPort = port(a, val());
    else if (a === '--ddb-endpoint') o.ddbEndpoint = endpointUrl(val());
    else if (a === '--table') o.tableName = val();
    else if (a === '--ddb-faults') o.ddbFaults = parseFaults(val());
    else if (a === '--host') o.host = val();
    else if (a === '--maintenance-interval') o.maintenanceInterval = Number(val());
    else if (a === '--data-dir') o.dataDir = val();
    else if (a === '--dashboard-port') o.dashboardPort = Number(val());
    else if (a === '--no-dashboard') o.dashboardPort = null;
    else if (a === '--no-response-limit') o.noResponseLimit = true;
    else if (a === '--baremetal-scheduler') o.baremetalScheduler = scheduler(a, val());
    else if (a === '--help' || a === '-h') {
      process.stdout.write(
        [
          'usage: npm start -- [--fresh] [--placement-port N] [--baremetal-port N] [--dashboard-port N | --no-dashboard] [--host H] [--maintenance-interval S] [--no-response-limit]',
          '                    [--ddb-port N | --ddb-endpoint URL] [--table NAME] [--ddb-faults SPEC]',
          '  --ddb-endpoint URL   use an existing DynamoDB (LocalStack, DynamoDB Local in a container, ...); the table is created if missing',
          '  --ddb-faults SPEC    DynamoDB fault and lag injector, e.g. rate=0.05,lag=500,seed=7 (see local/ddb-faults.ts)',
          '  --baremetal-scheduler database|placement',
          '                       where bare-metal allocations find and reserve nodes (default database; placement',
          '                       makes every node a resource provider and migrates the table first)',
          '',
        ].join('\n'),
      );
      process.exit(0);
    } else throw new Error(`unknown option ${a}`);
  }
  if (o.ddbEndpoint && o.ddbPort !== undefined)
    throw new Error('--ddb-port starts DynamoDB Local on that port; --ddb-endpoint uses an existing one: give one of them');
  if (o.ddbEndpoint && o.fresh)
    throw new Error('--fresh empties the DynamoDB Local that npm start runs; with --ddb-endpoint use a new --table instead');
  return o;
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
  /** the endpoint the handlers talk to: the fault injector's when it runs, else ddbEndpoint */
  handlerEndpoint: string;
  tableName: string;
  faults?: FaultProxy;
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
  // CloudWatch EMF metric lines are for Lambda; locally they would only be noise
  process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
  let faults: FaultProxy | undefined;
  try {
    await ensureTable(ddbEndpoint, tableName, process.env.AWS_REGION);
    if (o.ddbFaults) faults = await startFaultProxy(ddbEndpoint, o.ddbFaults);
    const handlerEndpoint = faults?.endpoint ?? ddbEndpoint;
    process.env.DDB_ENDPOINT = handlerEndpoint;
    // handlers read their environment when first used: import them only now
    const { resetConfig } = await import('../functions/config.js');
    resetConfig();
    // a table switched to the placement scheduler is migrated before anything is served
    // (as the maintenance task or `npx berth migrate-baremetal` does it in AWS)
    if (process.env.BAREMETAL_SCHEDULER === 'placement') {
      const { migrateNodesToPlacement } = await import('../functions/store/baremetal/placement-migration.js');
      await migrateNodesToPlacement({ deadline: Number.POSITIVE_INFINITY });
    }
    const { servePlacement, serveBaremetal } = await import('./apis.js');
    const servers: Server[] = [];
    const stopServers = () => Promise.all(servers.map((srv) => new Promise((r) => srv.close(r))));
    let placementUrl: string;
    let baremetalUrl: string;
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
    let dashboardUrl = '';
    // default: 8780 next to the default ports; any free port when the API ports were chosen
    const dashPort = o.dashboardPort === undefined ? (o.placementPort === 8778 ? 8780 : 0) : o.dashboardPort;
    if (dashPort !== null) {
      const { serveDashboard } = await import('./dashboard.js');
      const d = await serveDashboard({ port: dashPort, host: o.host, placementUrl, baremetalUrl });
      servers.push(d);
      dashboardUrl = `http://${o.host}:${(d.address() as { port: number }).port}`;
    }
    let timer: NodeJS.Timeout | undefined;
    if (o.maintenanceInterval > 0) {
      const { runMaintenance } = await import('../functions/maintenance/handler.js');
      timer = setInterval(() => {
        runMaintenance().catch((e: Error) => process.stderr.write(`[berth] maintenance failed: ${e.stack ?? e}\n`));
      }, o.maintenanceInterval * 1000);
      timer.unref();
    }
    const stop = async () => {
      if (timer) clearInterval(timer);
      await Promise.all(
        servers.map(
          (s) =>
            new Promise<void>((r) => {
              s.closeAllConnections?.();
              s.close(() => r());
            }),
        ),
      );
      await faults?.stop();
      await ddb?.stop();
    };
    return { ddb, ddbEndpoint, handlerEndpoint, tableName, faults, servers, placementUrl, baremetalUrl, dashboardUrl, stop };
  } catch (e) {
    await faults?.stop();
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
    `[berth] ready in ${((Date.now() - t0) / 1000).toFixed(1)} s; Ctrl-C stops everything`,
  ];
  process.stdout.write(lines.join('\n') + '\n');
  let stopping = false;
  const shutdown = async (sig: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`[berth] ${sig}: stopping\n`);
    await stack.stop().catch(() => undefined);
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGHUP', () => void shutdown('SIGHUP'));
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
