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
import { fileURLToPath } from 'node:url';
import { startDynamoDbLocal, ensureTable, type DdbLocal } from './ddb-local.js';
import type { LayoutRun } from './layout.js';
import { describeFaults, startFaultProxy, type FaultProxy } from './ddb-faults.js';
import { startMeterProxy, type MeterProxy } from '../measure/meter/proxy.js';
import { meterSummary } from '../measure/report.js';
import type { ContainerSet } from './containers.js';
import { closeServers } from './servers.js';
import type { LocalFeed } from './feed.js';
import { parseArgs, type Options } from './start-options.js';

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
