/**
 * Consumers and their generations (placement/objects/consumer.py, handlers/util.py
 * ensure_consumer, and the "add consumer generation" spec, seed 000), pure.
 *
 * A consumer record exists exactly while the consumer holds allocations: it is created
 * by the claim that gives it its first allocation (generation 1: created at 0, bumped
 * by that claim) and deleted by the change that removes its last one. Every change of
 * its allocations bumps the generation by one.
 *
 * What the client's `consumer_generation` means, by microversion band:
 *   < 1.28   no check: the change overwrites whatever is there (the store still
 *            conditions its write on the generation it read and re-reads on a lost
 *            race, so two such writers serialise, last one wins)
 *   >= 1.28  required: null = "I expect no consumer record" (a new consumer, or one
 *            whose allocations predate consumer records: legacy rows); an integer must
 *            equal the record's generation. Anything else is a 409
 *            placement.concurrent_update.
 * Below 1.8 requests carry no project/user: the configured "incomplete consumer"
 * project and user are used (and replace those of an existing consumer, as upstream).
 */

export type Resources = Record<string, number>;
/** provider uuid -> resource class -> amount */
export type AllocationMap = Record<string, Resources>;

export interface ConsumerRecord {
  uuid: string;
  project: string;
  user: string;
  /** consumer type (1.38); null = none, reported as "unknown" */
  type: string | null;
  generation: number;
  allocations: AllocationMap;
  createdAt: string;
  updatedAt: string;
  /** the id of the change that wrote it last (a change-log entry's sort key; absent on items from before the change feed) */
  last?: string;
}

/** consumer_type.NULL_CONSUMER_TYPE_ALIAS */
export const UNKNOWN_CONSUMER_TYPE = 'unknown';

/** How a request's consumer_generation is checked. */
export type GenerationCheck = { check: false } | { check: true; expected: number | null };

/** Python's %s of an int or None */
function pyStr(v: number | null): string {
  return v === null ? 'None' : String(v);
}

/**
 * handlers.util.ensure_consumer's generation check. `current` is the consumer record
 * (undefined when there is none, legacy rows or not). Returns the 409 detail, or
 * undefined when the request may proceed.
 */
export function consumerGenerationConflict(current: ConsumerRecord | undefined, check: GenerationCheck): string | undefined {
  if (!check.check) return undefined;
  if (current) {
    if (current.generation !== check.expected) {
      return `consumer generation conflict - expected ${current.generation} but got ${pyStr(check.expected)}`;
    }
    return undefined;
  }
  if (check.expected !== null) return `consumer generation conflict - expected null but got ${pyStr(check.expected)}`;
  return undefined;
}

/** The generation a consumer has after a change of its allocations. */
export function nextGeneration(current: ConsumerRecord | undefined): number {
  return (current?.generation ?? 0) + 1;
}

export function isEmptyAllocation(a: AllocationMap): boolean {
  return Object.keys(a).length === 0;
}
