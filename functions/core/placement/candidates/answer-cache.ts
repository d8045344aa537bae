/**
 * Rendered allocation-candidates answers, kept per (forest id and version, microversion,
 * cap, raw query): answers to identical queries over an unchanged forest are identical
 * (the solver is deterministic unless randomised), schedulers repeat the same query
 * between claims, and any write changes the forest version, so a kept answer is never
 * older than the snapshot. Least recently used first out, bounded by total size.
 */
export class AnswerCache {
  private readonly entries = new Map<string, string>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  static key(forest: { id: string | number; version: number; size: number }, version: string, cap: number, rawQuery: string): string {
    return `${forest.id}.${forest.version}|${forest.size}|${version}|${cap}|${rawQuery}`;
  }

  get(key: string): string | undefined {
    const hit = this.entries.get(key);
    if (hit !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, hit);
    }
    return hit;
  }

  put(key: string, body: string): void {
    if (body.length > this.maxBytes / 2 || this.entries.has(key)) return;
    this.entries.set(key, body);
    this.bytes += body.length;
    for (const [k, b] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(k);
      this.bytes -= b.length;
    }
  }

  get size(): number {
    return this.entries.size;
  }
}
