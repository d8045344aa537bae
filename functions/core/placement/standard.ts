/** The standard resource classes (os-resource-classes) and traits (os-traits). */
import traits from './data/standard-traits.json' with { type: 'json' };
import classes from './data/standard-resource-classes.json' with { type: 'json' };

export const STANDARD_TRAITS: readonly string[] = traits as string[];
export const STANDARD_RESOURCE_CLASSES: readonly string[] = classes as string[];

const traitSet = new Set(STANDARD_TRAITS);
const rcSet = new Set(STANDARD_RESOURCE_CLASSES);

export const isStandardTrait = (n: string) => traitSet.has(n);
export const isStandardResourceClass = (n: string) => rcSet.has(n);

export const CUSTOM_PREFIX = 'CUSTOM_';
/** os_traits / os_resource_classes custom-name rule */
export const CUSTOM_NAME_RE = /^CUSTOM_[A-Z0-9_]+$/;
