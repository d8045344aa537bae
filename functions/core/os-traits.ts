/**
 * The standard traits (os-traits), which both APIs know: Placement's standard traits
 * (core/placement/standard.ts orders them) and the names Ironic accepts on a node
 * besides custom ones (schemas/baremetal/traits.ts).
 */
import traits from './data/standard-traits.json' with { type: 'json' };

export const STANDARD_TRAITS: readonly string[] = traits as string[];

/** each standard trait's place in the os-traits list */
export const STANDARD_TRAIT_INDEX: ReadonlyMap<string, number> = new Map(STANDARD_TRAITS.map((n, i) => [n, i]));

export const isStandardTrait = (n: string) => STANDARD_TRAIT_INDEX.has(n);
