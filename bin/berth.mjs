#!/usr/bin/env node
// `npx berth …`: the operators' CLI (cli/berth.ts), TypeScript run through tsx in this process.
import { register } from 'tsx/esm/api';

register();
const { run } = await import(new URL('../cli/berth.ts', import.meta.url).href);
await run(process.argv.slice(2));
