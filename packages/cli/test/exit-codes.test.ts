/**
 * Exit codes and error lines: usage errors (2), a bad token or a non-admin on an admin command (4),
 * an unreachable server (1, one line; the stack only with DEBUG=1). And every command's help, and
 * shell completion.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from '../../server/test/support/harness.ts';
import { processIo } from '../src/io.ts';
import { createProgram } from '../src/program.ts';
import { ROOT, closedPort, lines, sandbox, type Sandbox } from './support/cli.ts';

let t: TestServer;
let box: Sandbox;
let unreachable: string;

test.before(async () => {
  t = await startTestServer({}, 'cli_exit_codes');
  box = await sandbox();
  unreachable = `http://127.0.0.1:${await closedPort()}`;
});
test.after(async () => {
  await box?.cleanup();
  await t?.close();
});

test('an unreachable server: exit 1 and one line saying what to check; the stack only with DEBUG=1', async () => {
  const [plain, debug] = await Promise.all([
    box.run(['results', 'list', '--server', unreachable]),
    box.run(['results', 'list', '--server', unreachable], { env: { DEBUG: '1' } }),
  ]);
  assert.is(plain.code, 1);
  assert.equal(lines(plain.stderr).length, 1, plain.stderr);
  assert.match(
    plain.stderr,
    /^Error: Cannot reach http:\/\/127\.0\.0\.1:\d+\/api\/v1\/results: .*Check the server address \(--server, BENCHMARKS_SERVER\)/,
  );
  assert.is(plain.stdout, '');
  assert.is(debug.code, 1);
  assert.match(debug.stderr, /\n\s+at /, 'DEBUG=1 adds the stack');
});

test('bin/benchmarks.js, the benchmarks of a clone, runs the CLI from its sources: the same version, and exit 2 on a usage error', async () => {
  const bin = join(ROOT, 'bin', 'benchmarks.js');
  const run = (args: string[]) =>
    spawnSync(process.execPath, [bin, ...args], { cwd: ROOT, env: { PATH: process.env.PATH, ...box.env }, encoding: 'utf8' });
  const version = run(['--version']);
  assert.is(version.status, 0, version.stderr);
  assert.is(version.stdout.trim(), JSON.parse(readFileSync(join(ROOT, 'packages', 'cli', 'package.json'), 'utf8')).version);
  const usage = run(['results', 'lst']);
  assert.is(usage.status, 2, usage.stderr);
  assert.match(usage.stderr, /unknown command 'lst'/);
});

test('usage errors exit 2 (commander errors, bad values, a group without its verb, no server); --help exits 0', async () => {
  const runs = await Promise.all([
    box.run(['results', 'lst', '--server', t.url]),
    box.run(['results', 'list', '--bogus', '--server', t.url]),
    box.run(['results', 'list', '--per-page', '500', '--server', t.url]),
    box.run(['results', 'list', '--filter', 'score', '--server', t.url]),
    box.run(['benchmarks', 'get', '--server', t.url]),
    box.run(['results']),
    box.run(['tags', 'list']),
    box.run(['-o', 'xml', 'tags', 'list', '--server', t.url]),
  ]);
  for (const res of runs) {
    assert.is(res.code, 2, res.stderr);
    assert.is(res.stdout, '');
  }
  assert.match(runs[0].stderr, /unknown command 'lst'/);
  assert.match(runs[2].stderr, /--per-page must be an integer from 1 to 100/);
  assert.match(runs[3].stderr, /^Error: Invalid option: 422 INVALID_FILTER/);
  assert.match(runs[6].stderr, /No server configured: pass --server URL, set BENCHMARKS_SERVER/);
  const help = await box.run(['results', 'upload', '--help']);
  assert.is(help.code, 0);
  assert.match(help.stdout, /Usage: benchmarks results upload \[options\] \[inputs\.\.\.\]/);
});

test('an admin command with a bad token or as a non-admin exits 4', async () => {
  const [bad, notAdmin] = await Promise.all([
    box.run(['review', 'list', '--server', t.url, '--token', 'garbage']),
    box.run(['review', 'list', '--server', t.url], { env: { BENCHMARKS_TOKEN: await t.user('plain') } }),
  ]);
  assert.is(bad.code, 4);
  assert.equal(
    lines(bad.stderr),
    ['Error: Not authenticated: the server does not accept this access token; run `benchmarks login` or pass --token.'],
    'one line, without the server’s internals in nested parentheses',
  );
  assert.is(notAdmin.code, 4);
  assert.match(notAdmin.stderr, /^Error: Not allowed: this needs an administrator/);
});

test('every command’s help lists the global options (--server, --token, --output, ...), the groups’ too', async () => {
  const program = createProgram(processIo());
  const all: Command[] = [];
  const walk = (command: Command) => {
    for (const sub of command.commands) {
      all.push(sub);
      walk(sub);
    }
  };
  walk(program);
  assert.ok(all.length > 60, `${all.length} commands`);
  for (const command of all) {
    const help = command.helpInformation();
    for (const option of ['-s, --server <url>', '--token <token>', '-o, --output <format>', '-q, --quiet', '--wide']) {
      assert.ok(help.includes(option), `${command.name()} --help lacks ${option}:\n${help}`);
    }
  }
  const upload = await box.run(['results', 'upload', '--help']);
  assert.match(upload.stdout, /Global Options:\n(.|\n)*-s, --server <url>/);
});

test('benchmarks completion bash|zsh prints a script that knows the commands', async () => {
  const [bash, zsh] = await Promise.all([box.run(['completion', 'bash']), box.run(['completion', 'zsh'])]);
  assert.is(bash.code, 0);
  assert.match(bash.stdout, /complete -o default -F _benchmarks_complete benchmarks/);
  assert.match(
    bash.stdout,
    /'results upload'\) words='--benchmark --flavor --executed-at --tag --dry-run --batch-size --concurrency --report/,
  );
  assert.match(zsh.stdout, /^#compdef benchmarks/);
  assert.match(zsh.stdout, /compdef _benchmarks benchmarks/);
});

test('benchmarks completion fish: a completion for every command path, files only where a command takes them', async () => {
  const fish = await box.run(['completion', 'fish']);
  assert.is(fish.code, 0, fish.stderr);
  const script = fish.stdout;
  const program = createProgram(processIo());
  const paths: string[] = [];
  const walk = (command: Command, path: string) => {
    for (const sub of command.commands) {
      const next = path ? `${path} ${sub.name()}` : sub.name();
      paths.push(next);
      walk(sub, next);
    }
  };
  walk(program, '');
  const declared = /^set -g __benchmarks_paths (.*)$/m
    .exec(script)![1]!
    .match(/'[^']*'/g)!
    .map((q) => q.slice(1, -1));
  assert.equal(declared, paths);
  for (const path of paths.filter((p) => p.includes(' '))) {
    const [parent, name] = [path.slice(0, path.lastIndexOf(' ')), path.slice(path.lastIndexOf(' ') + 1)];
    assert.ok(
      script.includes(`complete -c benchmarks -n '__benchmarks_at "${parent}"' -a '${name}'`),
      `${path} is offered after ${parent}`,
    );
  }
  assert.match(script, /^complete -c benchmarks -f$/m, 'no files unless a command takes them');
  assert.match(script, /^complete -c benchmarks -n '__benchmarks_at "results upload"' -F$/m);
  assert.match(script, /^complete -c benchmarks -n '__benchmarks_at "results upload"' -l report -r -F -d 'write the outcome/m);
  assert.match(script, /^complete -c benchmarks -n '__benchmarks_at "results upload"' -l benchmark -x -d /m);
  assert.match(script, /^complete -c benchmarks -n '__benchmarks_at "review approve"' -a 'benchmark site flavor tag'$/m);
  assert.match(script, /^complete -c benchmarks -l output -s o -x -a 'table json ndjson csv svg' -d /m);
  // Every line is a whole fish statement: single quotes balanced once `\'` and `\\` are taken out.
  for (const line of script.split('\n')) {
    const bare = line.replace(/\\[\\']/g, '');
    assert.is((bare.match(/'/g) ?? []).length % 2, 0, line);
  }
});

/** What `shell` (bash or fish, as .ci/run installs them) prints, run with `args`; a clear error when it is missing. */
function inShell(shell: 'bash' | 'fish', args: string[]): string {
  const run = spawnSync(shell, args, { encoding: 'utf8' });
  if (run.error) throw new Error(`${shell} is needed to load the completion script (.ci/run installs it): ${run.error.message}`);
  assert.is(run.status, 0, run.stderr);
  assert.is(run.stderr, '');
  return run.stdout;
}

test('the completion scripts, loaded by bash and fish, complete commands, subcommands, options and their values', async () => {
  const [bash, fish] = await Promise.all([box.run(['completion', 'bash']), box.run(['completion', 'fish'])]);
  const bashFile = join(box.dir, 'benchmarks.bash');
  const fishFile = join(box.dir, 'benchmarks.fish');
  writeFileSync(bashFile, bash.stdout);
  writeFileSync(fishFile, fish.stdout);
  inShell('fish', ['--no-execute', fishFile]);
  /** What bash offers after `line` (the last word is the one completed; '' after a space). */
  const bashOffers = (line: string) => {
    const words = line.split(' ');
    const program = `source ${bashFile}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _benchmarks_complete; printf '%s\\n' "\${COMPREPLY[@]}"`;
    return inShell('bash', ['--norc', '--noprofile', '-c', program]).split('\n').filter(Boolean).sort();
  };
  /** What fish offers after `line`, without the descriptions. */
  const fishOffers = (line: string) =>
    inShell('fish', ['--no-config', '-c', `source ${fishFile}; complete -C '${line}'`])
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split('\t')[0]!)
      .sort();
  for (const offers of [bashOffers, fishOffers]) {
    assert.equal(offers('benchmarks res'), ['results']);
    assert.equal(offers('benchmarks results up'), ['upload']);
    // The kinds of item (fish offers options once a - is typed, bash with the rest).
    assert.equal(
      offers('benchmarks review approve ').filter((w) => !w.startsWith('-')),
      ['benchmark', 'flavor', 'site', 'tag'],
    );
    assert.equal(offers('benchmarks results upload --rep'), ['--report']);
    assert.ok(offers('benchmarks changes --').includes('--fail-on'), 'the options of the command');
    assert.ok(offers('benchmarks changes --').includes('--server'), 'the global options too');
  }
  assert.equal(bashOffers('benchmarks -o '), ['csv', 'json', 'ndjson', 'table']);
  assert.equal(fishOffers('benchmarks -o '), ['csv', 'json', 'ndjson', 'svg', 'table']);
});

test.run();
