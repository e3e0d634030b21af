#!/usr/bin/env node
// The `benchmarks-demo` executable: `benchmarks-server start --demo` with this package's demo.
// Every option of `benchmarks-server start` applies (`benchmarks-demo --port 9000`).
// `benchmarks-demo issuer [--port N]` runs the demo's OpenID provider alone (issuer-command.ts).
import { main } from '@benchmarks/server';
import * as demo from './index.ts';
import { runIssuer } from './issuer-command.ts';

const args = process.argv.slice(2);
if (args[0] === 'issuer') {
  await runIssuer(args.slice(1)).catch((err: Error) => {
    process.stderr.write(`benchmarks-demo issuer: ${err.message}\n`);
    process.exit(1);
  });
} else {
  await main([...process.argv.slice(0, 2), 'start', '--demo', ...args], { demo });
}
