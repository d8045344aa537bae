/**
 * `berth history`: the allocation history (docs/consistency.md, "The allocation history") —
 * every consumer's allocations over time, as the stream processor wrote them.
 *
 *   berth history (--project P | --consumer C | --provider R | --all) [--from T] [--to T]
 *                 [--at T] [--format csv|json]
 *       the intervals overlapping [from, to) (default: everything kept), one row per
 *       consumer, provider and resource class; --at T: what was held at instant T
 *   berth history billing [--project P] --from T --to T [--format csv|json]
 *       resource-hours per project and resource class over [from, to)
 *
 * T is ISO 8601 (2026-11-28T10:00:00Z) or milliseconds since the epoch. Only changes the
 * processor has applied whole are shown (its watermark): a change larger than one
 * transaction appears at once or not at all.
 */
import { commandLine } from '../scripts/args.js';
import { allocationsAt, asOf, overlaps, resourceHours, type Interval } from '../functions/core/feed/history.js';

export interface HistoryRow {
  consumer: string;
  project: string;
  user: string;
  consumer_type: string | null;
  provider: string;
  resource_class: string;
  amount: number;
  from: string;
  to: string | null;
  generation: number;
  change: string;
}

/** one row per provider and class of each interval, in time order */
export function rowsOf(intervals: Interval[]): HistoryRow[] {
  const rows: HistoryRow[] = [];
  const sorted = [...intervals].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : a.consumer < b.consumer ? -1 : 1));
  for (const i of sorted) {
    for (const [rp, res] of Object.entries(i.allocations)) {
      for (const [rc, n] of Object.entries(res)) {
        rows.push({
          consumer: i.consumer,
          project: i.project,
          user: i.user,
          consumer_type: i.type,
          provider: rp,
          resource_class: rc,
          amount: n,
          from: new Date(i.from).toISOString(),
          to: i.to === undefined ? null : new Date(i.to).toISOString(),
          generation: i.generation,
          change: i.id,
        });
      }
    }
  }
  return rows;
}

export interface BillingRow {
  project: string;
  resource_class: string;
  resource_hours: number;
}

export function billingRows(intervals: Interval[], t0: number, t1: number): BillingRow[] {
  const out: BillingRow[] = [];
  for (const [project, byClass] of resourceHours(intervals, t0, t1)) {
    for (const [rc, hours] of byClass) out.push({ project, resource_class: rc, resource_hours: Math.round(hours * 1e6) / 1e6 });
  }
  return out.sort((a, b) => (a.project === b.project ? (a.resource_class < b.resource_class ? -1 : 1) : a.project < b.project ? -1 : 1));
}

const csvCell = (v: unknown) => {
  const s = v === null || v === undefined ? '' : String(v);
  return /[",\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
};

export function toCsv(rows: object[], header: string[]): string {
  return [header.join(','), ...rows.map((r) => header.map((h) => csvCell((r as Record<string, unknown>)[h])).join(','))].join('\n') + '\n';
}

/** a time argument: ISO 8601 or epoch ms */
export function parseTime(v: string, flag: string): number {
  const t = /^\d+$/.test(v) ? Number(v) : Date.parse(v);
  if (!Number.isFinite(t)) throw new Error(`${flag} ${v}: a time (ISO 8601 or ms since the epoch) expected`);
  return t;
}

interface Args {
  billing: boolean;
  project?: string;
  consumer?: string;
  provider?: string;
  all: boolean;
  from?: number;
  to?: number;
  at?: number;
  format: 'csv' | 'json';
}

const STRING = { type: 'string' } as const;
const HISTORY_OPTIONS = {
  project: STRING,
  consumer: STRING,
  provider: STRING,
  all: { type: 'boolean' },
  from: STRING,
  to: STRING,
  at: STRING,
  format: STRING,
} as const;

function parse(argv: string[]): Args {
  const a: Args = { billing: false, all: false, format: 'csv' };
  a.billing = argv[0] === 'billing';
  const { values } = commandLine(a.billing ? argv.slice(1) : argv, HISTORY_OPTIONS, {
    missing: (flag) => new Error(`${flag} needs a value`),
    unknown: (arg) => new Error(`berth history: unknown argument ${arg}`),
  });
  const text = (name: string) => values[name] as string | undefined;
  a.project = text('project');
  a.consumer = text('consumer');
  a.provider = text('provider');
  a.all = values.all === true;
  for (const name of ['from', 'to', 'at'] as const) if (text(name) !== undefined) a[name] = parseTime(text(name)!, `--${name}`);
  const format = text('format') ?? 'csv';
  if (format !== 'csv' && format !== 'json') throw new Error(`--format ${format}: csv or json`);
  a.format = format;
  const which = [a.project, a.consumer, a.provider].filter((x) => x !== undefined).length + (a.all ? 1 : 0);
  if (a.billing) {
    if (a.from === undefined || a.to === undefined) throw new Error('berth history billing: --from and --to are required');
    if (a.consumer || a.provider) throw new Error('berth history billing: per project (--project P) or every project');
  } else if (which !== 1) throw new Error('berth history: one of --project P, --consumer C, --provider R or --all');
  return a;
}

/** the intervals asked for, as the watermark shows them, that began before `until` */
export async function readIntervals(a: { project?: string; consumer?: string; provider?: string }, until: number): Promise<Interval[]> {
  const h = await import('../functions/store/history/history.js');
  const through = await h.readWatermark();
  let raw: Interval[];
  if (a.consumer) raw = await h.consumerIntervals(a.consumer, until);
  else if (a.provider) raw = await h.providerIntervals(a.provider, until);
  else if (a.project) raw = await h.projectIntervals(a.project, until);
  else raw = (await Promise.all((await h.historyProjects()).map((p) => h.projectIntervals(p, until)))).flat();
  return raw.map((i) => asOf(i, through)).filter((i): i is Interval => !!i);
}

export async function historyCommand(argv: string[]): Promise<number> {
  const a = parse(argv);
  const now = Date.now();
  if (a.billing) {
    const intervals = await readIntervals({ project: a.project }, a.to!);
    const rows = billingRows(intervals, a.from!, a.to!);
    process.stdout.write(a.format === 'json' ? `${JSON.stringify(rows, null, 2)}\n` : toCsv(rows, ['project', 'resource_class', 'resource_hours']));
    return 0;
  }
  const until = a.at !== undefined ? a.at + 1 : (a.to ?? now + 1);
  let intervals = await readIntervals(a, until);
  if (a.at !== undefined) intervals = [...allocationsAt(intervals, a.at).values()];
  else intervals = intervals.filter((i) => overlaps(i, a.from ?? 0, until));
  const rows = rowsOf(intervals);
  const header = ['consumer', 'project', 'user', 'consumer_type', 'provider', 'resource_class', 'amount', 'from', 'to', 'generation', 'change'];
  process.stdout.write(a.format === 'json' ? `${JSON.stringify(rows, null, 2)}\n` : toCsv(rows, header));
  return 0;
}
