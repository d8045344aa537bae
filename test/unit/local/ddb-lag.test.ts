/** The fault injector's index lag (local/ddb-lag.ts): what a lagging Query or Scan shows. */
import { describe, expect, it } from 'vitest';
import { keyId, LagView, type WireItem } from '../../../local/ddb-lag.js';

const T = 't1';
const item = (pk: string, sk: string, extra: WireItem = {}): WireItem => ({ pk: { S: pk }, sk: { S: sk }, ...extra });
const v1 = item('RP#a', 'RP', { gen: { N: '3' } });
const v2 = item('RP#a', 'RP');
const other = item('RP#b', 'RP', { gen: { N: '1' } });

/** a view in which RP#a was written just now (it was `v1` before), RP#new created and RP#gone deleted */
function view(): LagView {
  const lag = new LagView(60_000);
  lag.baseline(keyId(T, v1), v1);
  lag.record(keyId(T, v1), v2);
  const created = item('RP#new', 'RP');
  lag.baseline(keyId(T, created), null);
  lag.record(keyId(T, created), created);
  const gone = item('RP#gone', 'RP', { gen: { N: '7' } });
  lag.baseline(keyId(T, gone), gone);
  lag.record(keyId(T, gone), null);
  return lag;
}

describe('a lagging Scan or Query', () => {
  it('shows an item written within the lag as it was, in its page, however many pages follow', () => {
    const lag = view();
    // the first page of a paged scan (more pages follow): the item stays, as it was
    const page = { Items: [other, v2, item('RP#new', 'RP')], LastEvaluatedKey: item('RP#new', 'RP') };
    lag.correctList(T, {}, page);
    expect(page.Items).toEqual([other, v1]);
  });

  it('puts a deleted item back on the last page (of segment 0 only), once', () => {
    const lag = view();
    const last = { Items: [other] };
    lag.correctList(T, { Segment: 0 }, last);
    expect(last.Items).toEqual([other, item('RP#gone', 'RP', { gen: { N: '7' } })]);
    const segment1 = { Items: [other] };
    lag.correctList(T, { Segment: 1 }, segment1);
    expect(segment1.Items).toEqual([other]);
    // a page that holds the rewritten item shows it where it stands, not again at the end
    const single = { Items: [v2, other] };
    lag.correctList(T, {}, single);
    expect(single.Items).toEqual([v1, other, item('RP#gone', 'RP', { gen: { N: '7' } })]);
  });

  it('keeps to the key condition and the filter', () => {
    const lag = view();
    const q = {
      KeyConditionExpression: 'pk = :pk',
      FilterExpression: 'attribute_exists(gen)',
      ExpressionAttributeValues: { ':pk': { S: 'RP#a' } },
    };
    const out = { Items: [v2] };
    lag.correctList(T, q, out);
    expect(out.Items).toEqual([v1]);
    const none = { Items: [] as WireItem[] };
    lag.correctList(T, { ...q, ExpressionAttributeValues: { ':pk': { S: 'RP#new' } } }, none);
    expect(none.Items).toEqual([]);
  });
});
