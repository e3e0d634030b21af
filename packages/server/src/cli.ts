#!/usr/bin/env node
// The `benchmarks-server` executable.
import { main } from './program.ts';

await main();
