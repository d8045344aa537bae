/**
 * Text tables of what the metering proxy recorded (./meter/): units per request type
 * and the hottest partition keys. `npm start -- --ddb-meter` prints it when it stops; the
 * accountant prints its own, longer report (./accountant/).
 */
import { byLabel, keyLoads, totals, type CallRecord } from './ledger.js';

const f1 = (x: number) => (Math.round(x * 10) / 10).toString();

export function table(head: string[], rows: Array<Array<string | number>>): string {
  const cells = [head, ...rows.map((r) => r.map((c) => (typeof c === 'number' ? f1(c) : c)))];
  const widths = head.map((_, i) => Math.max(...cells.map((r) => String(r[i] ?? '').length)));
  return cells.map((r) => r.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]!) : String(c).padStart(widths[i]!))).join('  ')).join('\n');
}

export function meterSummary(records: CallRecord[], top = 10): string {
  if (!records.length) return '[berth] DynamoDB meter: no calls recorded\n';
  const t0 = Math.min(...records.map((r) => r.t));
  const t1 = Math.max(...records.map((r) => r.end));
  const secs = Math.max(1, (t1 - t0) / 1000);
  const labels = [...byLabel(records).values()].sort((a, b) => b.read + b.write + b.indexWrite - (a.read + a.write + a.indexWrite));
  const rows = labels.map((l) => [
    l.label,
    l.requests,
    l.calls,
    l.read,
    l.write,
    l.indexWrite,
    l.requests ? l.read / l.requests : 0,
    l.requests ? (l.write + l.indexWrite) / l.requests : 0,
  ]);
  const all = totals(records).calls;
  const keys = keyLoads(records)
    .sort((a, b) => b.read + b.write - (a.read + a.write))
    .slice(0, top);
  return [
    `[berth] DynamoDB meter: ${all.calls} calls over ${f1(secs)} s, ${f1(all.read)} read units, ${f1(all.write)} write units + ${f1(all.indexWrite)} index write units (AWS's rules)`,
    table(['request type', 'requests', 'calls', 'read', 'write', 'index', 'read/req', 'write/req'], rows),
    '',
    `hottest partition keys (units over the run; busiest second)`,
    table(
      ['key', 'family', 'read', 'write', 'peak read/s', 'peak write/s'],
      keys.map((k) => [k.key.length > 60 ? `${k.key.slice(0, 57)}...` : k.key, k.family, k.read, k.write, k.peakReadPerS, k.peakWritePerS]),
    ),
    '',
  ].join('\n');
}
