/**
 * Serves the read-only dashboard (dashboard/public, as it is: no build step) locally and proxies
 * /placement/* and /baremetal/* to the local APIs — those two and nothing else — so the
 * page needs no CORS. In AWS the same files are a static site (cdk/) and config.json
 * points at the API URLs.
 */
import { open, readFile, stat } from 'node:fs/promises';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { dirname, extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hostAllowed, refuseHost } from './http-adapter.js';

const PUBLIC = join(dirname(fileURLToPath(import.meta.url)), '..', 'dashboard', 'public');
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.png': 'image/png',
};

/**
 * what the page sends the APIs; nothing else of the browser's request is passed on.
 * Accept-Encoding too: a large answer (the provider list of a big cloud) is only sent
 * gzip-compressed, as it is to the browser in AWS.
 */
const FORWARDED_HEADERS = ['accept', 'accept-encoding', 'authorization', 'x-auth-token', 'openstack-api-version', 'x-openstack-ironic-api-version'];

function refuse(res: ServerResponse, status: number, message: string) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ message }));
}

/**
 * Forward a read of the page to one of the two APIs, and only there: `path` is appended
 * to the API's origin (never resolved as a URL, so `//other-host/x` stays on the API),
 * only GET/HEAD (the dashboard is read-only) and only the headers the page sets.
 */
function proxy(target: string, path: string, req: IncomingMessage, res: ServerResponse) {
  if (req.method !== 'GET' && req.method !== 'HEAD') return refuse(res, 405, 'the dashboard proxy is read-only');
  const origin = new URL(target).origin;
  let u: URL;
  try {
    u = new URL(`${origin}${path.startsWith('/') ? '' : '/'}${path}`);
  } catch {
    return refuse(res, 400, 'bad path');
  }
  if (u.origin !== origin) return refuse(res, 400, 'bad path');
  const headers: Record<string, string> = { host: u.host };
  for (const h of FORWARDED_HEADERS) {
    const v = req.headers[h];
    if (typeof v === 'string') headers[h] = v;
  }
  const up = request(u, { method: req.method, headers }, (r) => {
    res.writeHead(r.statusCode ?? 502, r.headers);
    r.pipe(res);
  });
  up.on('error', () => {
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
    res.end('{"message":"upstream unavailable"}');
  });
  up.end();
}

/** how many of the latest changes /events answers at most */
const EVENTS_MAX = 200;

/**
 * The latest events of the change feed's file (local/feed.ts), newest last: those after
 * change id `after` when given (the page asks again with the last one it has), at most
 * `limit`. Only the file's tail is read.
 */
async function latestEvents(file: string, after: string | null, limit: number): Promise<unknown[]> {
  let text: string;
  try {
    const { size } = await stat(file);
    const fh = await open(file, 'r');
    try {
      const len = Math.min(size, 2 * 1024 * 1024);
      const buf = Buffer.alloc(len);
      await fh.read(buf, 0, len, size - len);
      text = buf.toString('utf8');
    } finally {
      await fh.close();
    }
  } catch {
    return [];
  }
  const lines = text.split('\n').filter((l) => l.startsWith('{'));
  const out: unknown[] = [];
  for (let i = lines.length - 1; i >= 0 && out.length < limit; i--) {
    let e: { detail?: { id?: string } };
    try {
      e = JSON.parse(lines[i]!);
    } catch {
      continue;
    }
    if (after && String(e.detail?.id) <= after) break;
    out.push(e);
  }
  return out.reverse();
}

export function serveDashboard(opts: {
  port: number;
  host: string;
  placementUrl: string;
  baremetalUrl: string;
  token?: string;
  /** the change feed's events file (local/feed.ts): served at /events */
  eventsFile?: string;
}): Promise<Server> {
  const server = createServer(async (req, res) => {
    if (!hostAllowed(req.headers.host, opts.host)) return refuseHost(res, req.headers.host);
    const url = req.url ?? '/';
    if (url.startsWith('/placement/') || url === '/placement') return proxy(opts.placementUrl, url.slice('/placement'.length) || '/', req, res);
    if (url.startsWith('/baremetal/') || url === '/baremetal')
      return proxy(opts.baremetalUrl || 'http://127.0.0.1:1', url.slice('/baremetal'.length) || '/', req, res);
    const path = url.split('?')[0]!;
    if (path === '/config.json') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(
        JSON.stringify({
          placement: '/placement',
          baremetal: '/baremetal',
          token: opts.token ?? 'admin',
          ...(opts.eventsFile ? { events: '/events' } : {}),
        }),
      );
    }
    if (path === '/events' && opts.eventsFile) {
      if (req.method !== 'GET') return refuse(res, 405, 'read-only');
      const q = new URL(url, 'http://x').searchParams;
      const limit = Math.min(EVENTS_MAX, Math.max(1, Number(q.get('limit') ?? 50) || 50));
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-cache' });
      return res.end(JSON.stringify({ events: await latestEvents(opts.eventsFile, q.get('after'), limit) }));
    }
    const file = normalize(join(PUBLIC, path === '/' ? 'index.html' : path));
    if (!file.startsWith(PUBLIC)) {
      res.writeHead(404);
      return res.end();
    }
    try {
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-cache' });
      res.end(body);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve(server));
  });
}
