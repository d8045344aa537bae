import { describe, expect, it } from 'vitest';
import { DEFAULTS } from '../../../measure/accountant/options.js';
import { ACCOUNTANT_USAGE, parseAccountantArgs, UsageError } from '../../../measure/accountant/args.js';

describe("the accountant's command line", () => {
  it('asks for help instead of failing', () => {
    expect(parseAccountantArgs(['--help']).help).toBe(true);
    expect(parseAccountantArgs(['--containers', '2', '-h']).help).toBe(true);
    expect(ACCOUNTANT_USAGE).toContain('--containers');
  });

  it('reads container counts, rates and the json file', () => {
    const { o, json, help } = parseAccountantArgs(['--containers', '2,8', '--rates', '4:10', '--no-validate', '--json', 'x.jsonl']);
    expect(help).toBeUndefined();
    expect(o.containers).toEqual([2, 8]);
    expect(o.claimsPerS).toBe(4);
    expect(o.candidatesPerS).toBe(10);
    expect(o.validate).toBeUndefined();
    expect(json).toBe('x.jsonl');
    expect(DEFAULTS.containers).not.toBe(o.containers);
  });

  it('reads the periods between requests and whether to measure a deploy', () => {
    const { o } = parseAccountantArgs(['--resync', '40', '--image-interval', '0', '--no-deploy']);
    expect(o.resyncS).toBe(40);
    expect(o.imageIntervalS).toBe(0);
    expect(o.deploy).toBe(false);
    expect(DEFAULTS.deploy).toBe(true);
    expect(ACCOUNTANT_USAGE).toContain('--no-deploy');
  });

  it('answers a mistake with a usage error, not a crash', () => {
    expect(() => parseAccountantArgs(['--bogus'])).toThrow(UsageError);
    expect(() => parseAccountantArgs(['--containers'])).toThrow(/needs a value/);
    expect(() => parseAccountantArgs(['--containers', '0'])).toThrow(UsageError);
    expect(() => parseAccountantArgs(['--rates', 'x'])).toThrow(UsageError);
  });
});
