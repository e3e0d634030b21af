import type { Command } from 'commander';
import type { Io } from '../../io.ts';
import { decide, registerDecision, type Options } from './decide.ts';

export function register(program: Command): void {
  registerDecision(program, 'acknowledge');
}

export function run(options: Options, io: Io): Promise<void> {
  return decide('acknowledge', options, io);
}
