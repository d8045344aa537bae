import { describe, expect, it } from 'vitest';
import { AnswerCache } from '../../../functions/core/placement/candidates/answer-cache.js';

describe('AnswerCache', () => {
  it('keys answers by forest state, microversion, cap and query', () => {
    const f = { id: 1, version: 7, size: 3 };
    expect(AnswerCache.key(f, '1.39', -1, 'resources=VCPU:1')).not.toBe(AnswerCache.key({ ...f, version: 8 }, '1.39', -1, 'resources=VCPU:1'));
    expect(AnswerCache.key(f, '1.39', -1, 'a')).not.toBe(AnswerCache.key(f, '1.38', -1, 'a'));
    expect(AnswerCache.key(f, '1.39', -1, 'a')).not.toBe(AnswerCache.key(f, '1.39', 1000, 'a'));
  });

  it('evicts the least recently used answers first and stays within its size', () => {
    const c = new AnswerCache(10);
    c.put('a', 'xxxx');
    c.put('b', 'yyyy');
    expect(c.get('a')).toBe('xxxx'); // a is now the most recently used
    c.put('c', 'zzzz'); // 12 > 10: b goes
    expect(c.get('b')).toBeUndefined();
    expect(c.get('a')).toBe('xxxx');
    expect(c.get('c')).toBe('zzzz');
  });

  it('does not keep an answer larger than half its size, nor count one twice', () => {
    const c = new AnswerCache(10);
    c.put('big', '123456');
    expect(c.get('big')).toBeUndefined();
    c.put('a', 'xxxx');
    c.put('a', 'xxxx');
    c.put('b', 'yyyy');
    expect(c.size).toBe(2);
  });
});
