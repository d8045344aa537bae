import { describe, expect, it } from 'vitest';
import { COUNTERS, listen, tally } from '../../../functions/observability/counters.js';

describe('process counters (one observer hook)', () => {
  it('counts nothing unless someone listens; each listener counts from when it began until it stops', () => {
    tally('tx.attempts', 5);
    const a = listen();
    tally('tx.attempts', 2);
    const b = listen();
    tally('tx.attempts');
    tally('reserve.won');
    expect(a.get('tx.attempts')).toBe(3);
    expect(b.get('tx.attempts')).toBe(1);
    a.stop();
    tally('tx.attempts');
    expect(a.get('tx.attempts')).toBe(3);
    expect(b.get('tx.attempts')).toBe(2);
    // a group: every counter of it, 0 where nothing was counted
    const reserve = b.group('reserve');
    expect(reserve.won).toBe(1);
    expect(reserve.taken).toBe(0);
    expect(Object.keys(reserve)).toHaveLength(COUNTERS.filter((c) => c.startsWith('reserve.')).length);
    b.stop();
  });
});
