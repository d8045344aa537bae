#!/usr/bin/env node
// `npx berth …`: the operators' CLI (scripts/berth.ts), TypeScript run through tsx in this process.
import { register } from 'tsx/esm/api';

register();
const { run } = await import(new URL('../scripts/berth.ts', import.meta.url).href);
await run(process.argv.slice(2));
