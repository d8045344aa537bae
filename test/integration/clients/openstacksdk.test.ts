/**
 * openstacksdk (Debian's python3-openstacksdk 0.101, unmodified) against Berth's
 * bare-metal handlers behind the local API Gateway adapter, the state machines run
 * locally: what an SDK user calls for drivers, node validation and VIFs, and the
 * pattern of the SDK's own allocation tests — power a node off without waiting, then
 * allocate at once — repeated; the allocation must always get the node (Ironic 21.4
 * passes that every time). The script is test/integration/clients/sdk_baremetal.py.
 */
import { execFile } from 'node:child_process';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { useBaremetalTable } from '../baremetal/harness.js';
import { PYTHON } from './cli.js';
import { needs } from '../../optional.js';

const sdk = needs('openstacksdk');
const ROUNDS = 6;

let server: Server;
let url: string;
let idle: () => Promise<void>;

beforeAll(async () => {
  if (!sdk.available) return;
  await useBaremetalTable({ BAREMETAL_INDEX_RETRIES: '0' });
  const { serveBaremetal } = await import('../../../local/apis.js');
  const { localRunner } = await import('../../../local/state-machines.js');
  server = await serveBaremetal(0);
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const runner = localRunner();
  idle = () => runner.idle();
});

afterAll(async () => {
  await idle?.();
  server?.closeAllConnections?.();
  await new Promise((r) => server?.close(r));
});

function runSdk(): Promise<any> {
  return new Promise((resolve, reject) => {
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/tmp', LANG: 'C.UTF-8', PYTHONDONTWRITEBYTECODE: '1' };
    execFile(
      PYTHON,
      [join(import.meta.dirname, 'sdk_baremetal.py'), url, String(ROUNDS)],
      { env, timeout: 280_000, maxBuffer: 16 << 20 },
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`sdk_baremetal.py failed: ${err.message}\n${stderr}`));
        resolve(JSON.parse(String(stdout).trim().split('\n').pop()!));
      },
    );
  });
}

sdk.describe('openstacksdk conn.baremetal (python3-openstacksdk)', () => {
  it(`drivers, validate_node, VIFs; then power off + allocate at once, ${ROUNDS} times, never a spurious error`, async () => {
    const out = await runSdk();
    expect(out.drivers).toEqual([['fake-hardware', ['berth']]]);
    expect(out.drivers_detail).toEqual([['fake-hardware', 'fake', ['fake', 'no-raid']]]);
    expect(out.driver).toEqual({ name: 'fake-hardware', hosts: ['berth'], default_power_interface: 'fake' });
    for (const iface of ['boot', 'deploy', 'power', 'management', 'network', 'raid']) expect(out.validate[iface], iface).toEqual([true, null]);
    expect(out.vifs_attached).toEqual(['sdk-vif-1', 'sdk-vif-2']);
    // detaching a VIF that is gone is a 400 the SDK reads as "already removed"
    expect(out.detached).toEqual([true, false]);
    expect(out.vifs_left).toEqual(['sdk-vif-2']);
    expect(out.rounds).toHaveLength(ROUNDS);
    for (const r of out.rounds) {
      expect({ state: r.state, got: r.got, last_error: r.last_error }, r.rc).toEqual({ state: 'active', got: r.node, last_error: null });
      expect(r.other_state).toBe('error');
      expect(r.other_error).toContain(`no available nodes match the resource class ${r.rc}-none`);
    }
  }, 300_000);
});
