/**
 * `npm run openapi`: writes the OpenAPI 3.1 documents of both APIs
 * (schemas/openapi/placement.json, schemas/openapi/baremetal.json) from the route
 * tables and the zod request schemas (scripts/openapi-document.ts). The APIs serve these files
 * at GET /openapi.json; test/unit/openapi fails when they are out of date.
 * `--check`: write nothing, exit 1 if a file differs from what would be written.
 */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderOpenApi, type ApiName } from './openapi-document.js';
import { commandLine, plainErrors } from './args.js';

const OUT = join(dirname(fileURLToPath(import.meta.url)), '..', 'schemas', 'openapi');
const check = commandLine(process.argv.slice(2), { check: { type: 'boolean' } }, plainErrors()).values.check === true;
let stale = 0;
mkdirSync(OUT, { recursive: true });
for (const api of ['placement', 'baremetal'] as ApiName[]) {
  const file = join(OUT, `${api}.json`);
  const text = renderOpenApi(api);
  let old = '';
  try {
    old = readFileSync(file, 'utf8');
  } catch {
    /* new */
  }
  if (old === text) {
    process.stdout.write(`[openapi] ${api}: up to date (${file})\n`);
  } else if (check) {
    stale++;
    process.stdout.write(`[openapi] ${api}: OUT OF DATE — run npm run openapi\n`);
  } else {
    writeFileSync(file, text);
    const ops = Object.values(JSON.parse(text).paths as Record<string, object>).reduce(
      (n, p) => n + Object.keys(p).filter((k) => k !== 'parameters').length,
      0,
    );
    process.stdout.write(`[openapi] ${api}: wrote ${file} (${ops} operations)\n`);
  }
}
process.exit(stale ? 1 : 0);
