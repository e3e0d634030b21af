/**
 * The concurrency test at full size: 32 clients uploading 10,000 results while creates race and
 * claims are reviewed (packages/server/test/concurrency.test.ts runs 2,000 in `npm test`).
 *
 *   node --import ./scripts/dev/register.js scripts/concurrency-10k.ts        # 10,000
 *   node --import ./scripts/dev/register.js scripts/concurrency-10k.ts 50000 # any number
 */
import { spawn } from 'node:child_process';

const uploads = process.argv[2] ?? '10000';
const file = new URL('../packages/server/test/concurrency.test.ts', import.meta.url).pathname;
const register = new URL('./dev/register.js', import.meta.url).pathname;
const child = spawn(process.execPath, ['--import', register, file], {
  env: { ...process.env, CONCURRENCY_UPLOADS: uploads },
  stdio: 'inherit',
});
child.on('exit', (code) => process.exit(code ?? 1));
