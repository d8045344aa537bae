/** Types of scripts/node-baseline.mjs (plain JavaScript: it runs on the old Node too). */
export const NODE_VERSION: string;
export const NODE_DIR: string;
export const NODE_BIN: string;
export function requiredNode(): { range: string; min: [number, number, number] };
export function satisfies(version: string, min: readonly number[]): boolean;
export function nodePackage(platform?: string, arch?: string): string;
