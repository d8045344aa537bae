/** The accountant's ledger (measure/ledger.ts; the attribution header, local/attribution.ts): key families, attribution, totals, spread. */
import { describe, expect, it } from 'vitest';
import { byLabel, fanOut, keyFamily, keyLoads, totals, type CallRecord, type KeyUse } from '../../../measure/ledger.js';
import { decodeAttribution, encodeAttribution } from '../../../local/attribution.js';

const rec = (end: number, label: string, request: string, keys: Array<Partial<KeyUse> & { pk: string }>): CallRecord => {
  const full = keys.map((k) => ({ space: 'table', read: 0, write: 0, bytes: 0, items: 1, ...k }));
  return {
    seq: 0,
    t: end - 5,
    end,
    op: 'Query',
    table: 't',
    who: { container: 'c0', request, label, family: 'f' },
    outcome: 'ok',
    read: full.reduce((n, k) => n + k.read, 0),
    write: full.filter((k) => k.space === 'table').reduce((n, k) => n + k.write, 0),
    indexWrite: full.filter((k) => k.space !== 'table').reduce((n, k) => n + k.write, 0),
    keys: full,
  };
};

describe('the ledger', () => {
  it('names key families by their first segment, whatever varies after it', () => {
    expect(keyFamily('LOG#29345678#2')).toBe('LOG#*#*');
    expect(keyFamily('RP#6f1c0000-0000-4000-8000-000000000001')).toBe('RP#*');
    expect(keyFamily('USAGE#project one')).toBe('USAGE#*');
    expect(keyFamily('RCS')).toBe('RCS');
  });

  it('carries who made a call through a header value and back', () => {
    const a = { container: 'c1-42', request: 'r;1', label: 'GET /x/{y}', family: 'placement-x' };
    expect(decodeAttribution(encodeAttribution(a))).toEqual(a);
    expect(decodeAttribution(undefined)).toBeUndefined();
    expect(decodeAttribution('%%%')).toBeUndefined();
  });

  it('sums per request type and per key, and both agree', () => {
    const rs = [
      rec(1000, 'candidates', 'a', [
        { pk: 'LOG#1#0', read: 1 },
        { pk: 'LOG#1#1', read: 1 },
      ]),
      rec(1100, 'candidates', 'b', [{ pk: 'LOG#1#0', read: 2 }]),
      rec(1200, 'claim', 'c', [
        { pk: 'RP#u', write: 4 },
        { space: 'gsi1', pk: 'RPS#3', write: 2 },
      ]),
    ];
    const l = byLabel(rs);
    expect(l.get('candidates')).toMatchObject({ requests: 2, calls: 2, read: 4 });
    expect(l.get('candidates')!.byFamily['LOG#*#*']).toMatchObject({ read: 4 });
    expect(l.get('claim')).toMatchObject({ requests: 1, write: 4, indexWrite: 2 });
    expect(l.get('claim')!.byFamily['gsi1:RPS#*']).toMatchObject({ write: 2 });
    const t = totals(rs);
    expect(t.keys).toEqual({ read: t.calls.read, write: t.calls.write + t.calls.indexWrite });
    const loads = keyLoads(rs);
    expect(loads.find((k) => k.key === 'LOG#1#0')).toMatchObject({ read: 3, peakReadPerS: 3, family: 'LOG#*#*' });
    expect(loads.find((k) => k.key === 'gsi1:RPS#3')).toMatchObject({ space: 'gsi1', pk: 'RPS#3', write: 2 });
  });

  it('measures a family’s spread as its units over its busiest key’s, per window', () => {
    const even = [0, 1, 2, 3].map((s) => rec(500, 'x', String(s), [{ pk: `LOG#1#${s}`, read: 1 }]));
    expect(fanOut(even, 'read').get('LOG#*#*')).toBeCloseTo(4, 10);
    const skewed = [rec(500, 'x', 'a', [{ pk: 'LOG#1#0', read: 3 }]), rec(500, 'x', 'b', [{ pk: 'LOG#1#1', read: 1 }])];
    expect(fanOut(skewed, 'read').get('LOG#*#*')).toBeCloseTo(4 / 3, 10);
    // two windows, one key each: no spread within a window
    const apart = [rec(500, 'x', 'a', [{ pk: 'K#1', write: 1 }]), rec(20_500, 'x', 'b', [{ pk: 'K#2', write: 1 }])];
    expect(fanOut(apart, 'write').get('K#*')).toBe(1);
  });
});
