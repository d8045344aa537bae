/**
 * Nova keeps working across the move, without a restart: the same SchedulerReportClient
 * process (test/integration/clients/nova_continue.py) starts a compute node and claims
 * instances against the real Placement 8.0.0, then — after `berth import-placement
 * --final` copied that Placement into a table this process serves — continues against
 * Berth with the generations it cached. A second process does the same against a
 * second reference and stays there (the control). After the switch Nova must see, and
 * be answered, exactly what the control saw: no request refused for a generation
 * (409), every transcript line equal.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { freePort } from '../../../local/ddb-local.js';
import { needs } from '../../optional.js';
import { PYTHON } from '../clients/cli.js';
import { runBerth } from '../cli/run-berth.js';
import { referenceLauncher, startReference, waitForUp, type ReferenceServer } from '../differential-kit.js';
import { startPlacement, type Api } from '../harness.js';

const nova = needs('nova', 'placement', 'reference-servers');
const DRIVER = join(__dirname, '../clients/nova_continue.py');

/** the driver, with a reader of the JSON lines it prints */
function driver(endpoint: string) {
  const child: ChildProcessWithoutNullStreams = spawn(PYTHON, [DRIVER, endpoint], {
    // one hash seed for both drivers: the query strings Nova builds from Python sets come out alike
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/tmp',
      LANG: 'C.UTF-8',
      PYTHONHASHSEED: '1',
      PYTHONDONTWRITEBYTECODE: '1',
    },
  });
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const lines: string[] = [];
  const waiting: Array<(l: string) => void> = [];
  createInterface({ input: child.stdout }).on('line', (l) => {
    const w = waiting.shift();
    if (w) w(l);
    else lines.push(l);
  });
  const exited = new Promise<number>((r) => child.on('close', (code) => r(code ?? 1)));
  return {
    child,
    /** the next JSON line (or the driver's error output if it ended first) */
    async next(): Promise<any> {
      const line = lines.shift() ?? (await Promise.race([new Promise<string>((r) => waiting.push(r)), exited.then((code) => `exit ${code}`)]));
      if (line.startsWith('exit ')) throw new Error(`nova_continue.py ${line}:\n${err.slice(-3000)}`);
      return JSON.parse(line);
    },
    send(line: string) {
      child.stdin.write(`${line}\n`);
    },
    exited,
  };
}

let api: Api;
const refs: ReferenceServer[] = [];

beforeAll(async () => {
  if (!nova.available) return;
  api = await startPlacement();
  for (let i = 0; i < 2; i++) {
    const r = startReference(referenceLauncher('serve-placement.sh'), await freePort());
    refs.push(r);
    await waitForUp(r.url, 90_000);
  }
}, 240_000);

afterAll(async () => {
  for (const r of refs) r.stop();
  await api?.close();
});

nova.describe("Nova's report client continues against Berth after the import, in the same process", () => {
  it('keeps every cached generation right: the same answers as a client that stayed', { timeout: 300_000 }, async () => {
    const [source, control] = refs as [ReferenceServer, ReferenceServer];
    const moving = driver(source.url);
    const staying = driver(control.url);
    const [m1, s1] = await Promise.all([moving.next(), staying.next()]);
    // the same history on both: the cache was refreshed after the claims moved CN1's generation
    expect(m1).toEqual(s1);
    expect(m1.transcript.find((l: [string, any]) => l[0] === 'compute update after the claims')[1]).toMatchObject({ attempts: 2 });

    // the move: a final pass (the source is quiet: Nova waits), verified
    const env = { TABLE_NAME: process.env.TABLE_NAME!, DDB_ENDPOINT: inject('ddbEndpoint') };
    const imp = await runBerth(['import-placement', '--from', source.url, '--token', 'admin', '--final'], env, 300_000);
    expect(imp.code, imp.stderr).toBe(0);
    const v = await runBerth(['verify-placement', '--against', source.url, '--token', 'admin'], env, 300_000);
    expect(v.code, v.stdout + v.stderr).toBe(0);

    moving.send(`switch ${api.url}`);
    staying.send('stay');
    const [m2, s2] = await Promise.all([moving.next(), staying.next()]);
    expect(await moving.exited).toBe(0);
    expect(await staying.exited).toBe(0);
    // no request after the switch refused for a stale generation; the first update
    // wrote with the cached generations at its first attempt
    expect(m2.requests.filter((r: [string, string, string, number]) => r[3] === 409)).toEqual([]);
    expect(m2.transcript[0]).toEqual(['compute update (cached generations)', { returned: null, attempts: 1 }]);
    expect(m2.requests.length).toBeGreaterThan(10);
    // and everything Nova saw and was answered equals what the client that stayed saw
    expect(m2.transcript).toEqual(s2.transcript);
    expect(m2.requests.map((r: unknown[]) => [r[1], r[2], r[3]])).toEqual(s2.requests.map((r: unknown[]) => [r[1], r[2], r[3]]));
  });
});
