import { describe, expect, it } from 'vitest';
import { AUTOSCALING_TARGET, onDemandMonthly, provisionedMonthly } from '../../../measure/accountant/billing.js';
import { PRICES, SECONDS_PER_MONTH } from '../../../measure/accountant/prices.js';

describe('DynamoDB capacity modes', () => {
  it('on demand: every consumed unit at its price', () => {
    const c = onDemandMonthly(1000, 100);
    expect(c.read).toBeCloseTo((1000 * SECONDS_PER_MONTH * 0.125) / 1e6);
    expect(c.write).toBeCloseTo((100 * SECONDS_PER_MONTH * 0.625) / 1e6);
    expect(c.total).toBeCloseTo(c.read + c.write);
  });

  it('provisioned: capacity = consumed / target utilisation, every index at least its minimum, per capacity-hour', () => {
    const c = provisionedMonthly(700, 140, { indexes: 2, min: 5 });
    expect(AUTOSCALING_TARGET).toBe(0.7);
    expect(c.readCapacity).toBeCloseTo(1000 + 10);
    expect(c.writeCapacity).toBeCloseTo(200 + 10);
    const hours = SECONDS_PER_MONTH / 3600;
    expect(c.read).toBeCloseTo(1010 * PRICES.dynamodbProvisioned.perRcuHour * hours);
    expect(c.write).toBeCloseTo(210 * PRICES.dynamodbProvisioned.perWcuHour * hours);
    // an idle table still pays its minimums
    expect(provisionedMonthly(0, 0, { indexes: 2, min: 5 }).readCapacity).toBe(15);
    expect(() => provisionedMonthly(1, 1, { indexes: 0, min: 1, target: 0 })).toThrow(/target utilisation/);
  });

  it('at a steady load at 70 % utilisation provisioned costs ~40 % of on demand', () => {
    const od = onDemandMonthly(2830, 2000);
    const pr = provisionedMonthly(2830, 2000, { indexes: 2, min: 5 });
    expect(pr.total / od.total).toBeGreaterThan(0.3);
    expect(pr.total / od.total).toBeLessThan(0.45);
  });
});
