/** The command lines of the scripts, `npm start` and the benches (scripts/args.ts, on node:util's parseArgs). */
import { describe, expect, it } from 'vitest';
import { commandLine, leadingOptions, plainErrors } from '../../../scripts/args.js';

const OPTIONS = { table: { type: 'string' }, fresh: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } as const;

describe('a command line', () => {
  it('gives the options in order, the last value of each, and the positionals it takes', () => {
    const line = commandLine(['--table', 'a', '--fresh', '--table=b', 'file'], OPTIONS, plainErrors(), 1);
    expect(line.options.map((o) => [o.name, o.value])).toEqual([
      ['table', 'a'],
      ['fresh', undefined],
      ['table', 'b'],
    ]);
    expect(line.values).toEqual({ table: 'b', fresh: true });
    expect(line.positionals).toEqual(['file']);
    expect(commandLine(['-h'], OPTIONS, plainErrors()).values).toEqual({ help: true });
  });

  it('takes the next argument as a value whatever it looks like', () => {
    expect(commandLine(['--table', '--fresh'], OPTIONS, plainErrors()).values).toEqual({ table: '--fresh' });
  });

  it('says what is wrong in the command’s words', () => {
    expect(() => commandLine(['--table'], OPTIONS, plainErrors())).toThrow('--table needs a value');
    expect(() => commandLine(['--bogus'], OPTIONS, plainErrors())).toThrow('unknown option --bogus');
    expect(() => commandLine(['--fresh=1'], OPTIONS, plainErrors())).toThrow('unknown option --fresh=1');
    expect(() => commandLine(['a', 'b'], OPTIONS, plainErrors(), 1)).toThrow('unknown option b');
    expect(() => commandLine(['--table'], OPTIONS, plainErrors(undefined, 'usage: x'))).toThrow('--table needs a value\nusage: x');
    class UsageError extends Error {}
    expect(() =>
      commandLine(
        ['--x'],
        OPTIONS,
        plainErrors((m) => new UsageError(m)),
      ),
    ).toThrow(UsageError);
  });

  it('reads the options before a command and leaves the rest to it', () => {
    const g = { table: { type: 'string' }, region: { type: 'string' } } as const;
    expect(leadingOptions(['--table', 't', 'tree', '--table', 'x'], g, plainErrors())).toEqual({
      values: { table: 't' },
      rest: ['tree', '--table', 'x'],
    });
    expect(leadingOptions(['--frob', 'tree'], g, plainErrors()).rest).toEqual(['--frob', 'tree']);
    expect(leadingOptions([], g, plainErrors())).toEqual({ values: {}, rest: [] });
    expect(() => leadingOptions(['--region'], g, plainErrors())).toThrow('--region needs a value');
  });
});
