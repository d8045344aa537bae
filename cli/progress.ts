/**
 * A progress bar on stderr: redrawn in place on a terminal, one line per 10 % otherwise
 * (CI logs, pipes), and always a final line.
 */
export interface Progress {
  update(done: number, total: number): void;
  finish(note?: string): void;
}

export function progressBar(label: string, stream: NodeJS.WriteStream = process.stderr, width = 30): Progress {
  const tty = Boolean(stream.isTTY) && process.env.CI !== 'true';
  const t0 = Date.now();
  let lastDecile = -1;
  let last = { done: 0, total: 0 };
  const line = (done: number, total: number) => {
    const f = total ? done / total : 1;
    const fill = Math.round(f * width);
    const rate = done / Math.max(0.001, (Date.now() - t0) / 1000);
    return `${label} [${'#'.repeat(fill)}${'.'.repeat(width - fill)}] ${done}/${total} ${(f * 100).toFixed(0)}% ${rate.toFixed(0)}/s`;
  };
  return {
    update(done, total) {
      last = { done, total };
      if (tty) stream.write(`\r${line(done, total)}`);
      else {
        const decile = total ? Math.floor((done / total) * 10) : 10;
        if (decile !== lastDecile && decile < 10) {
          lastDecile = decile;
          stream.write(`${line(done, total)}\n`);
        }
      }
    },
    finish(note) {
      const s = `${line(last.done, last.total)} in ${((Date.now() - t0) / 1000).toFixed(1)} s${note ? ` — ${note}` : ''}`;
      stream.write(tty ? `\r${s}\n` : `${s}\n`);
    },
  };
}
