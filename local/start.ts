/**
 * `npm start`: the whole of Berth on this machine, with the real pieces.
 *   DynamoDB Local (data in .data/ddb unless --fresh) -> the table
 *   Placement's Lambda handlers behind the payload-v2 HTTP adapter (127.0.0.1:8778)
 *   the bare-metal API's handlers (127.0.0.1:6385), the allocation state machine run
 *   locally from its ASL file, the scheduled maintenance function on a timer.
 * Options: --fresh, --placement-port N, --baremetal-port N, --dashboard-port N, --ddb-port N,
 *          --host H, --maintenance-interval SECONDS (0 disables),
 *          --no-response-limit (lift Lambda's 6 MB answer limit, which applies by default as in AWS)
 * SIGINT / SIGTERM stop every child.
 */
import type { Server } from 'node:http';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startDynamoDbLocal, ensureTable, type DdbLocal } from './ddb-local.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

interface Options {
  fresh: boolean;
  placementPort: number;
  baremetalPort: number;
  ddbPort?: number;
  host: string;
  maintenanceInterval: number;
  dataDir: string;
  /** null disables the dashboard; 0 picks any free port */
  dashboardPort?: number | null;
  /** lift Lambda's 6 MB response limit (local only; AWS cannot) */
  noResponseLimit?: boolean;
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
    else if (a === '--ddb-port') o.ddbPort = Number(val());
    else if (a === '--host') o.host = val();
    else if (a === '--maintenance-interval') o.maintenanceInterval = Number(val());
    else if (a === '--data-dir') o.dataDir = val();
    else if (a === '--dashboard-port') o.dashboardPort = Number(val());
    else if (a === '--no-dashboard') o.dashboardPort = null;
    else if (a === '--no-response-limit') o.noResponseLimit = true;
    else if (a === '--help' || a === '-h') {
      process.stdout.write(
        'usage: npm start -- [--fresh] [--placement-port N] [--baremetal-port N] [--dashboard-port N | --no-dashboard] [--ddb-port N] [--host H] [--maintenance-interval S] [--no-response-limit]\n',
      );
      process.exit(0);
    } else throw new Error(`unknown option ${a}`);
  }
  return o;
}

export interface RunningStack {
  ddb: DdbLocal;
  servers: Server[];
  placementUrl: string;
  baremetalUrl: string;
  dashboardUrl: string;
  stop(): Promise<void>;
}

/** Start everything; used by `npm start`, the integration tests and the benchmarks. */
export async function startStack(o: Options): Promise<RunningStack> {
  const ddb = await startDynamoDbLocal({ port: o.ddbPort, dataDir: o.fresh ? undefined : o.dataDir });
  const tableName = process.env.TABLE_NAME ?? 'berth';
  process.env.TABLE_NAME = tableName;
  process.env.DDB_ENDPOINT = ddb.endpoint;
  process.env.AWS_REGION ??= 'local';
  if (o.noResponseLimit) process.env.MAX_RESPONSE_BYTES = '0';
  // CloudWatch EMF metric lines are for Lambda; locally they would only be noise
  process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
  try {
    await ensureTable(ddb.endpoint, tableName);
    // handlers read their environment when first used: import them only now
    const { resetConfig } = await import('../functions/config.js');
    resetConfig();
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
      await ddb.stop();
    };
    return { ddb, servers, placementUrl, baremetalUrl, dashboardUrl, stop };
  } catch (e) {
    await ddb.stop();
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
    `[berth] DynamoDB Local  ${stack.ddb.endpoint}  (${o.fresh ? 'in memory, fresh' : `data in ${o.dataDir}`})`,
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
  stack.ddb.child.once('exit', (code) => {
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
