/**
 * The local servers (`npm start`) trust `x-auth-token: admin`, so they must not be
 * reachable through tricks: the dashboard's proxy reaches its two APIs and nothing else
 * (`/placement//HOST:PORT/x` used to resolve to any host, with the caller's headers —
 * SSRF, instance metadata included, when bound to 0.0.0.0), is read-only and passes on
 * only the headers the page sets; and every local server refuses a Host header naming
 * anything but an IP address, localhost or an allowed name (DNS rebinding).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { startPlacement, type Api } from '../harness.js';
import { send } from '../../fuzz/harness.js';
import { serveDashboard } from '../../../local/dashboard.js';
import { serveBaremetal } from '../../../local/apis.js';

let api: Api;
let victim: Server;
let victimPort: number;
const victimSaw: Array<{ url: string; headers: IncomingHttpHeaders }> = [];
let dash: Server;
let dashUrl: string;
let spyDash: Server;
let spyDashUrl: string;
let bm: Server;
let bmUrl: string;

const port = (s: Server) => (s.address() as { port: number }).port;

beforeAll(async () => {
  api = await startPlacement();
  // stands for anything else on the network: instance metadata, an internal service
  victim = createServer((req, res) => {
    victimSaw.push({ url: req.url ?? '', headers: req.headers });
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('secret-credentials');
  });
  await new Promise<void>((r) => victim.listen(0, '127.0.0.1', () => r()));
  victimPort = port(victim);
  dash = await serveDashboard({ port: 0, host: '127.0.0.1', placementUrl: api.url, baremetalUrl: '' });
  dashUrl = `http://127.0.0.1:${port(dash)}`;
  // a dashboard whose "Placement" is the recording server: what does the proxy pass on?
  spyDash = await serveDashboard({ port: 0, host: '127.0.0.1', placementUrl: `http://127.0.0.1:${victimPort}`, baremetalUrl: '' });
  spyDashUrl = `http://127.0.0.1:${port(spyDash)}`;
  bm = await serveBaremetal(0);
  bmUrl = `http://127.0.0.1:${port(bm)}`;
});
afterAll(async () => {
  for (const s of [dash, spyDash, victim, bm]) {
    s?.closeAllConnections?.();
    await new Promise((r) => s?.close(r));
  }
  await api?.close();
});

describe('the dashboard proxy reaches its two APIs only', () => {
  it('a path naming another host stays on the API (nothing reaches the other host)', async () => {
    victimSaw.length = 0;
    for (const path of [
      `/placement//127.0.0.1:${victimPort}/latest/meta-data/`,
      `/placement///127.0.0.1:${victimPort}/x`,
      `/placement/\\\\127.0.0.1:${victimPort}/x`,
      `/placement//@127.0.0.1:${victimPort}/x`,
      `/baremetal//127.0.0.1:${victimPort}/latest/meta-data/`,
      `/placement/..//127.0.0.1:${victimPort}/x`,
    ]) {
      const r = await send(dashUrl, { method: 'GET', path, headers: { 'x-auth-token': 'admin' } });
      expect(r.text, path).not.toContain('secret-credentials');
    }
    expect(victimSaw).toEqual([]);
    // the API itself is reached as before
    const ok = await send(dashUrl, {
      method: 'GET',
      path: '/placement/resource_providers',
      headers: { 'x-auth-token': 'admin', accept: 'application/json' },
    });
    expect(ok.status, ok.text).toBe(200);
  });

  it('is read-only and passes on only what the page sends', async () => {
    const post = await send(dashUrl, {
      method: 'POST',
      path: '/placement/resource_providers',
      headers: { 'x-auth-token': 'admin', 'content-type': 'application/json' },
      body: Buffer.from('{"name": "via-dashboard"}'),
    });
    expect(post.status).toBe(405);
    victimSaw.length = 0;
    await send(spyDashUrl, {
      method: 'GET',
      path: '/placement/resource_providers',
      headers: { 'x-auth-token': 'tok', accept: 'application/json', cookie: 'session=1', 'x-forwarded-host': 'evil.example', 'x-roles': 'admin' },
    });
    expect(victimSaw).toHaveLength(1);
    expect(victimSaw[0]!.headers).toMatchObject({ 'x-auth-token': 'tok', accept: 'application/json' });
    for (const h of ['cookie', 'x-forwarded-host', 'x-roles']) expect(victimSaw[0]!.headers[h], h).toBeUndefined();
  });
});

describe('local servers refuse foreign Host headers (DNS rebinding)', () => {
  const servers = () => [
    ['placement', api.url, '/'],
    ['bare metal', bmUrl, '/'],
    ['dashboard', dashUrl, '/config.json'],
  ];
  it('a rebound name is refused; IP addresses and localhost are served', async () => {
    for (const [name, url, path] of servers()) {
      const p = new URL(url!).port;
      const evil = await send(url!, { method: 'GET', path: path!, headers: { host: `rebind.attacker.example:${p}`, 'x-auth-token': 'admin' } });
      expect(evil.status, `${name}: ${evil.text}`).toBe(403);
      expect(evil.text).not.toContain('admin');
      for (const host of [`127.0.0.1:${p}`, `localhost:${p}`, `[::1]:${p}`, `berth.localhost:${p}`]) {
        const r = await send(url!, { method: 'GET', path: path!, headers: { host } });
        expect(r.status, `${name} ${host}`).toBe(200);
      }
    }
  });
  it('BERTH_ALLOWED_HOSTS admits a name', async () => {
    process.env.BERTH_ALLOWED_HOSTS = 'berth.lan, other.lan';
    try {
      for (const [name, url, path] of servers()) {
        const r = await send(url!, { method: 'GET', path: path!, headers: { host: 'berth.lan' } });
        expect(r.status, name).toBe(200);
      }
    } finally {
      delete process.env.BERTH_ALLOWED_HOSTS;
    }
  });
});
