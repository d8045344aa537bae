/**
 * Nova's own Placement client, unmodified (nova.scheduler.client.report.
 * SchedulerReportClient from Debian's python3-nova: what nova-compute, the scheduler,
 * the conductor and nova-api run), driven by ./nova_report.py through compute start-up
 * with a nested provider tree, updates and a child removed, allocation candidates with
 * granular groups and traits, claims with consumer generations and their conflicts,
 * a cold migration (instance -> migration -> instance), partial removals, quota usage
 * per project and project+user, a reshape with allocations in place, and deletion.
 *
 * The driver prints a transcript of what the client saw and what the API held after
 * each step. It runs first against the real Placement (Debian's python3-placement,
 * test/fixtures/placement/serve.py), then against Berth; both must produce the
 * recorded transcript (test/fixtures/nova-report/transcript.json — regenerate it from
 * the reference: `/usr/bin/python3 test/fixtures/placement/serve.py 18790 &` then
 * `/usr/bin/python3 test/integration/clients/nova_report.py http://127.0.0.1:18790`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort } from '../../../local/ddb-local.js';
import { startContainers, type Api } from '../harness.js';
import { needs } from '../../optional.js';
import { PYTHON } from './cli.js';

const nova = needs('nova');
const reference = needs('nova', 'placement');
const DRIVER = join(__dirname, 'nova_report.py');
const EXPECTED = JSON.parse(readFileSync(join(__dirname, '../../fixtures/nova-report/transcript.json'), 'utf8'));

/** run the driver against a Placement endpoint: its transcript, or its error output */
function drive(endpoint: string): Promise<{ code: number; transcript: unknown; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(PYTHON, [DRIVER, endpoint], {
      // (no __pycache__ beside the drivers: they import nova_kit.py)
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', LANG: 'C.UTF-8', PYTHONDONTWRITEBYTECODE: '1' },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => {
      let transcript: unknown;
      try {
        transcript = JSON.parse(out);
      } catch {
        transcript = undefined;
      }
      resolve({ code: code ?? 1, transcript, stderr: err });
    });
  });
}

let berth: Api;
let ref: ChildProcess | undefined;

beforeAll(async () => {
  if (!nova.available) return;
  berth = await startContainers(2);
});

afterAll(async () => {
  ref?.kill('SIGTERM');
  await berth?.close();
});

reference.describe("Nova's report client against the reference Placement", () => {
  it('runs every flow and sees what the recorded transcript says', async () => {
    const port = await freePort();
    ref = spawn(PYTHON, [join(__dirname, '../../fixtures/placement/serve.py'), String(port)], { stdio: 'ignore' });
    const url = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 90_000;
    for (;;) {
      try {
        if ((await fetch(url)).status === 200) break;
      } catch {
        /* not up yet */
      }
      if (Date.now() > deadline) throw new Error('the reference Placement did not start');
      await new Promise((r) => setTimeout(r, 300));
    }
    const r = await drive(url);
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    expect(r.transcript).toEqual(EXPECTED);
    ref.kill('SIGTERM');
    ref = undefined;
  }, 180_000);
});

nova.describe("Nova's report client against Berth", () => {
  it('runs every flow and sees what the reference showed', async () => {
    const r = await drive(berth.url);
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    expect(r.transcript).toEqual(EXPECTED);
  }, 180_000);
});
