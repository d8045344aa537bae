/**
 * Runs the real, unmodified OpenStack command-line clients (Debian's python3-openstackclient
 * with the osc-placement plugin, python3-ironicclient's `baremetal`) against a Berth
 * served in this test process. Authentication is keystoneauth's `admin_token` plugin:
 * a fixed token (`admin`, our local noauth2 admin) sent as X-Auth-Token to a fixed
 * endpoint — the same settings an operator uses against a local or deployed Berth.
 *
 * Commands go to one long-lived interpreter (driver.py) that calls the client's own
 * entry point (`openstackclient.shell:main`, `ironicclient.shell:main` — what
 * /usr/bin/openstack and /usr/bin/baremetal call) once per command: a fresh process per
 * command costs 1.5–3 s of imports and plugin discovery on this machine. `binary()`
 * runs the installed executable itself, to prove the entry point.
 * Everything is asynchronous: the servers live in this process's event loop.
 */
import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const PYTHON = '/usr/bin/python3';
export const CLIENTS = {
  openstack: { binary: '/usr/bin/openstack', entry: 'openstackclient.shell:main' },
  baremetal: { binary: '/usr/bin/baremetal', entry: 'ironicclient.shell:main' },
} as const;

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface Cli {
  /** run; resolves whatever the exit code */
  run(...args: string[]): Promise<CliResult>;
  /** run, fail unless it exits 0, return stdout */
  ok(...args: string[]): Promise<string>;
  /** run with `-f json`, fail unless it exits 0, return the parsed output */
  json(...args: string[]): Promise<any>;
  /** run the installed executable (a process of its own) instead of the driver */
  binary(...args: string[]): Promise<CliResult>;
  /** every command run so far and its wall time (for the report) */
  timings: { args: string[]; ms: number }[];
  close(): void;
}

const DRIVER = join(dirname(fileURLToPath(import.meta.url)), 'driver.py');
const home = mkdtempSync(join(tmpdir(), 'berth-cli-home-'));

export function installed(client: keyof typeof CLIENTS): boolean {
  return existsSync(CLIENTS[client].binary);
}

export function cli(client: keyof typeof CLIENTS, endpoint: string, env: Record<string, string> = {}): Cli {
  const timings: { args: string[]; ms: number }[] = [];
  // a clean environment: nothing from the developer's clouds.yaml or OS_* variables
  const childEnv: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    LANG: 'C.UTF-8',
    PYTHONDONTWRITEBYTECODE: '1',
    OS_AUTH_TYPE: 'admin_token',
    OS_TOKEN: 'admin',
    OS_ENDPOINT: endpoint,
    ...env,
  };
  let driver: ChildProcessWithoutNullStreams | undefined;
  let driverErr = '';
  const waiting: ((r: CliResult) => void)[] = [];
  let chain: Promise<unknown> = Promise.resolve();

  const start = () => {
    driver = spawn(PYTHON, [DRIVER, CLIENTS[client].entry], { env: childEnv, stdio: ['pipe', 'pipe', 'pipe'] });
    driver.stderr.on('data', (d) => (driverErr += d));
    createInterface({ input: driver.stdout }).on('line', (line) => waiting.shift()?.(JSON.parse(line)));
    driver.on('exit', (code) => {
      for (const w of waiting.splice(0)) w({ code: code ?? 1, stdout: '', stderr: `driver exited: ${driverErr}` });
      driver = undefined;
    });
  };

  const run = (...args: string[]): Promise<CliResult> => {
    // one command at a time, in order
    const p = chain.then(
      () =>
        new Promise<CliResult>((resolve) => {
          if (!driver) start();
          const t0 = Date.now();
          waiting.push((r) => {
            timings.push({ args, ms: Date.now() - t0 });
            resolve(r);
          });
          driver!.stdin.write(JSON.stringify({ argv: args }) + '\n');
        }),
    );
    chain = p;
    return p;
  };
  const ok = async (...args: string[]) => {
    const r = await run(...args);
    if (r.code !== 0) throw new Error(`${client} ${args.join(' ')} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    return r.stdout;
  };
  return {
    run,
    ok,
    async json(...args) {
      const out = await ok(...args, '-f', 'json');
      return JSON.parse(out);
    },
    binary: (...args: string[]) =>
      new Promise<CliResult>((resolve) => {
        const t0 = Date.now();
        execFile(CLIENTS[client].binary, args, { env: childEnv, timeout: 90_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
          timings.push({ args: ['(binary)', ...args], ms: Date.now() - t0 });
          const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
          resolve({ code, stdout: String(stdout), stderr: String(stderr) });
        });
      }),
    timings,
    close() {
      driver?.stdin.end();
      driver?.kill();
    },
  };
}

/** One line for the run's output: how many commands and how long they took. */
export function reportTimings(name: string, c: Cli | undefined): void {
  if (!c?.timings.length) return;
  const total = c.timings.reduce((s, t) => s + t.ms, 0);
  process.stdout.write(`[clients] ${name}: ${c.timings.length} commands, ${(total / 1000).toFixed(1)} s\n`);
}
