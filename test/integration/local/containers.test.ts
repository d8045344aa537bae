/**
 * `npm start -- --containers K`: K processes really serve (each answers with its own
 * process id), round robin; a write through one is read through the other (each has its
 * own snapshot, kept current through the change log); stopping frees the ports; and the
 * containers die with their parent even when it is killed outright.
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, inject, it } from 'vitest';
import { freePort } from '../../../local/ddb-local.js';
import { startStack } from '../../../local/start.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const TSX = join(ROOT, 'node_modules', '.bin', 'tsx');
const H = { 'x-auth-token': 'admin', 'content-type': 'application/json', 'openstack-api-version': 'placement latest' };

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const canListen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
  return true;
}

describe('npm start --containers', () => {
  it('two processes serve behind one port, round robin, and see each other’s writes; stop frees the ports', async () => {
    const placementPort = await freePort();
    const baremetalPort = await freePort();
    const stack = await startStack({
      fresh: false,
      ddbEndpoint: inject('ddbEndpoint'),
      tableName: `cont_${randomUUID().replace(/-/g, '')}`,
      placementPort,
      baremetalPort,
      host: '127.0.0.1',
      maintenanceInterval: 0,
      dataDir: '',
      dashboardPort: null,
      containers: 2,
      quietContainers: true,
    });
    const pids = stack.containers!.containers.map((c) => c.pid);
    try {
      expect(new Set(pids).size).toBe(2);
      expect(pids).not.toContain(process.pid);
      const seen: string[] = [];
      const uuid = randomUUID();
      const created = await fetch(`${stack.placementUrl}/resource_providers`, {
        method: 'POST',
        headers: H,
        body: JSON.stringify({ name: `c-${uuid}`, uuid }),
      });
      expect(created.status).toBe(200);
      seen.push(created.headers.get('x-berth-container')!);
      for (let i = 0; i < 3; i++) {
        // listed by whichever container answers: each keeps its own snapshot current
        const r = await fetch(`${stack.placementUrl}/resource_providers?name=c-${uuid}`, { headers: H });
        expect(((await r.json()) as { resource_providers: Array<{ uuid: string }> }).resource_providers.map((p) => p.uuid)).toEqual([uuid]);
        seen.push(r.headers.get('x-berth-container')!);
      }
      const bm = await fetch(`${stack.baremetalUrl}/v1/nodes`, { headers: { 'x-openstack-ironic-api-version': '1.80' } });
      expect(bm.status).toBe(200);
      // round robin over both processes, each naming itself
      expect(seen).toEqual([seen[0], seen[1], seen[0], seen[1]]);
      expect(new Set(seen).size).toBe(2);
      for (const id of seen) expect(pids.map(String)).toContain(id.split('-')[1]);
      expect(stack.containers!.dispatched.every((n) => n >= 2)).toBe(true);
    } finally {
      await stack.stop();
    }
    expect(pids.some(alive)).toBe(false);
    expect(await canListen(placementPort)).toBe(true);
    expect(await canListen(baremetalPort)).toBe(true);
  }, 120_000);

  it('the containers die with their parent, even when it is killed with SIGKILL', async () => {
    const child = spawn(
      TSX,
      [
        'local/start.ts',
        '--ddb-endpoint',
        inject('ddbEndpoint'),
        '--table',
        `cont_${randomUUID().replace(/-/g, '')}`,
        '--containers',
        '2',
        '--placement-port',
        '0',
        '--baremetal-port',
        '0',
        '--no-dashboard',
        '--maintenance-interval',
        '0',
      ],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, BERTH_DDB_FAULTS: '' } },
    );
    let out = '';
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (d) => {
        out += String(d);
        if (out.includes('ready in')) resolve();
      });
      child.stderr!.on('data', (d) => (out += String(d)));
      child.once('exit', (code) => reject(new Error(`npm start exited (${code}):\n${out}`)));
    });
    const pids = [...out.matchAll(/c\d+-(\d+)/g)].map((m) => Number(m[1]));
    expect(pids).toHaveLength(2);
    expect(pids.every(alive)).toBe(true);
    // tsx runs the script in a node process of its own: that one is the containers' parent
    const script = execFileSync('pgrep', ['-P', String(child.pid)], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map(Number);
    expect(script).toHaveLength(1);
    process.kill(script[0]!, 'SIGKILL');
    expect(await until(() => !pids.some(alive), 15_000)).toBe(true);
    child.kill('SIGKILL');
  }, 120_000);
});
