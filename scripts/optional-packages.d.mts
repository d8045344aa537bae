/** Types of scripts/optional-packages.mjs (plain JavaScript: test-all.mjs reads it without a compiler). */
export interface OptionalPackage {
  id: string;
  packages: string[];
  hint?: string;
  tests: string;
  present(): boolean;
}
export interface OptionalPackageState extends OptionalPackage {
  installed: boolean;
}
export const OPTIONAL_PACKAGES: OptionalPackage[];
export function sharedDir(): string;
export function strictCi(): boolean;
export function optionalPackage(id: string): OptionalPackageState;
export function missingPackages(): OptionalPackageState[];
export function installHint(entry: OptionalPackage): string;
export function missingName(entry: OptionalPackage): string;
