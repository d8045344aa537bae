/**
 * What an import pass has read of its source, kept on local disk as it reads (one JSON
 * line per provider or consumer read), so a pass cut short while reading — the long part
 * of a first pass over a large cloud — resumes where it stopped instead of reading
 * everything again. A read is used again only if it still holds: a provider's when the
 * source's list shows the same generation (and it was settled: every sub-read answered
 * that generation), a consumer's when a provider's allocation list shows the same
 * consumer generation. A final pass uses only a final pass's reads (its reads of
 * allocations and aggregates must be taken during the freeze). The journal is removed
 * when a pass ends.
 */
import { createWriteStream, existsSync, readFileSync, rmSync, type WriteStream } from 'node:fs';
import type { ProviderRead, SourceConsumer } from '../functions/core/placement/transfer.js';

export interface JournalHeader {
  table: string;
  source: string;
  version: string;
  final: boolean;
}

interface ProviderEntry {
  p: string;
  /** the generation the list showed */
  g: number;
  whole: boolean;
  read: ProviderRead;
}

interface ConsumerEntry {
  c: string;
  read: SourceConsumer;
}

export class ReadJournal {
  private readonly providers = new Map<string, ProviderEntry>();
  private readonly consumers = new Map<string, SourceConsumer>();
  private out: WriteStream;
  /** reads taken from the journal instead of the source */
  reused = { providers: 0, consumers: 0 };

  private constructor(
    readonly file: string,
    readonly header: JournalHeader,
    keep: boolean,
  ) {
    if (keep) this.load();
    this.out = createWriteStream(file, { flags: keep ? 'a' : 'w' });
    if (!keep) this.out.write(`${JSON.stringify({ journal: 1, ...header })}\n`);
  }

  /** The journal at `file`: its reads kept if it was written for the same table, source, microversion and kind of pass. */
  static open(file: string, header: JournalHeader): ReadJournal {
    let keep = false;
    if (existsSync(file)) {
      try {
        const first = JSON.parse(readFileSync(file, 'utf8').split('\n', 1)[0] ?? '');
        keep = first.journal === 1 && (['table', 'source', 'version', 'final'] as const).every((k) => first[k] === header[k]);
      } catch {
        keep = false;
      }
    }
    return new ReadJournal(file, header, keep);
  }

  /** how many reads it holds from an earlier, cut-short pass */
  get size(): number {
    return this.providers.size + this.consumers.size;
  }

  private load(): void {
    const lines = readFileSync(this.file, 'utf8').split('\n').slice(1);
    for (const line of lines) {
      if (!line) continue;
      let e: ProviderEntry | ConsumerEntry;
      try {
        e = JSON.parse(line);
      } catch {
        continue; // the line the interruption cut
      }
      if ('p' in e) {
        const had = this.providers.get(e.p);
        if (!had || e.whole || !had.whole) this.providers.set(e.p, e);
      } else this.consumers.set(e.c, e.read);
    }
  }

  /** A provider's read from the journal, if it was taken at generation `listed` (and whole, if `whole`). */
  provider(uuid: string, listed: number, whole: boolean): ProviderRead | undefined {
    const e = this.providers.get(uuid);
    if (!e || e.g !== listed || (whole && !e.whole)) return undefined;
    this.reused.providers++;
    return e.read;
  }

  /** A consumer's read from the journal, if it was at consumer generation `generation`. */
  consumer(uuid: string, generation: number | undefined): SourceConsumer | undefined {
    const e = this.consumers.get(uuid);
    if (!e || generation === undefined || e.generation !== generation) return undefined;
    this.reused.consumers++;
    return e;
  }

  /** Keep a provider's read (only a settled one: every sub-read answered the listed generation). */
  recordProvider(uuid: string, listed: number, whole: boolean, read: ProviderRead): void {
    if (read.gone || read.generations.some((g) => g !== listed)) return;
    this.out.write(`${JSON.stringify({ p: uuid, g: listed, whole, read } satisfies ProviderEntry)}\n`);
  }

  recordConsumer(read: SourceConsumer | null): void {
    if (read) this.out.write(`${JSON.stringify({ c: read.uuid, read } satisfies ConsumerEntry)}\n`);
  }

  /** The pass ended: the journal goes. */
  async remove(): Promise<void> {
    await new Promise<void>((r) => this.out.end(r));
    rmSync(this.file, { force: true });
  }

  async close(): Promise<void> {
    await new Promise<void>((r) => this.out.end(r));
  }
}
