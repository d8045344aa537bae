/**
 * The operators' CLI (`npx berth`, bin/berth.mjs → cli/berth.ts) run as a real
 * process, the way an operator runs it: its exit code and both output streams.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';

export const BERTH_BIN = join(process.cwd(), 'bin', 'berth.mjs');

export interface BerthRun {
  code: number;
  stdout: string;
  stderr: string;
  /** the signal that ended it (a test's induced crash), if any */
  signal?: string;
  ms: number;
}

/** `berth ARGS` with only PATH, HOME and `env` in its environment */
export function runBerth(args: string[], env: Record<string, string>, timeoutMs = 120_000): Promise<BerthRun> {
  return new Promise((resolve) => {
    const t0 = Date.now();
    execFile(
      process.execPath,
      [BERTH_BIN, ...args],
      { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env }, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const e = err as (Error & { code?: number | string; signal?: string }) | null;
        resolve({
          code: e ? (typeof e.code === 'number' ? e.code : 1) : 0,
          stdout: String(stdout),
          stderr: String(stderr),
          ...(e?.signal ? { signal: e.signal } : {}),
          ms: Date.now() - t0,
        });
      },
    );
  });
}
