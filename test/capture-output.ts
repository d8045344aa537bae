/**
 * What the process writes to stdout and stderr, for tests that check what is logged: the
 * writes still reach the terminal, and `text` accumulates them until `restore()`.
 */
export interface CapturedOutput {
  readonly text: string;
  restore(): void;
}

export function captureOutput(): CapturedOutput {
  let text = '';
  const writes: Array<[NodeJS.WriteStream, NodeJS.WriteStream['write']]> = [];
  for (const s of [process.stdout, process.stderr]) {
    const orig = s.write.bind(s);
    writes.push([s, s.write]);
    s.write = ((chunk: unknown, ...rest: unknown[]) => {
      text += String(chunk);
      return (orig as (...a: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof s.write;
  }
  return {
    get text() {
      return text;
    },
    restore() {
      for (const [s, w] of writes) s.write = w;
    },
  };
}
