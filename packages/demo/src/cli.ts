#!/usr/bin/env node
// The `benchmarks-demo` executable: `benchmarks-server start --demo` with this package's demo.
// Every option of `benchmarks-server start` applies (`benchmarks-demo --port 9000`).
import { main } from '@benchmarks/server';
import * as demo from './index.ts';

await main([...process.argv.slice(0, 2), 'start', '--demo', ...process.argv.slice(2)], { demo });
