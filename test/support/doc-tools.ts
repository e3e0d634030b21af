/**
 * The commands the documentation's shell examples call, as a directory to put first on PATH:
 * `benchmarks` and `benchmarks-server` from this repository (the CLI bundled from its sources, the
 * compiled server as the package installs it), `npx @benchmarks/cli|server` mapped
 * to them, `curl` recording each answer's status for the test, and `npm`, `npx <anything else>`,
 * `docker` and `git` refusing to run (an example using them must be marked, see doc-blocks.ts).
 */
import { execFileSync } from 'node:child_process';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cliBundle } from '../../packages/cli/test/support/cli-bundle.ts';
import { currentBuild } from '../../scripts/current-build.ts';
import { ROOT } from './run.ts';

export interface Tools {
  /** The directory of the commands. */
  bin: string;
  /** Where `curl` appends `<DOCEX_CMD> <status>` lines (DOCEX_CURL_LOG in the environment). */
  curlLog: string;
}

const sh = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

function refuse(name: string): string {
  return `#!/usr/bin/env bash
printf 'docs test: "%s" is not run here; mark it <!-- not run %s...%s: REASON --> (docs/architecture.md)\\n' "${name} $*" '\`${name} ' '\`' >&2
exit 127
`;
}

export async function createTools(dir: string): Promise<Tools> {
  const bin = join(dir, 'bin');
  await mkdir(bin, { recursive: true });
  // The CLI bundled from its sources: through tsx, a second of CPU for each of about a hundred commands.
  const cli = await cliBundle();
  // The compiled server: through tsx, each start costs another second of processor time.
  await currentBuild(ROOT);
  const which = (name: string) => {
    try {
      return execFileSync('bash', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim();
    } catch {
      throw new Error(`The documentation's examples call ${name}: install it (.ci/run does).`);
    }
  };
  which('jq');
  const curl = which('curl');
  const curlLog = join(dir, 'curl.log');
  const node = sh(process.execPath);
  const scripts: Record<string, string> = {
    benchmarks: `#!/bin/sh\nexec ${node} ${sh(cli)} "$@"\n`,
    'benchmarks-server': `#!/bin/sh\nexec ${node} ${sh(join(ROOT, 'packages', 'server', 'dist', 'cli.js'))} "$@"\n`,
    npx: `#!/usr/bin/env bash
case "$1" in
  @benchmarks/cli|@benchmarks/cli@*) shift; exec benchmarks "$@" ;;
  @benchmarks/server|@benchmarks/server@*) shift; exec benchmarks-server "$@" ;;
esac
${refuse('npx').split('\n').slice(1).join('\n')}`,
    npm: refuse('npm'),
    docker: refuse('docker'),
    git: refuse('git'),
    uuidgen: `#!/bin/sh\nexec ${node} -e 'console.log(crypto.randomUUID())'\n`,
    // Each answer's status goes to the log, tagged with the command of the example being run.
    curl: `#!/usr/bin/env bash
err=$(mktemp)
${sh(curl)} --no-progress-meter "$@" --write-out '%{stderr}@@docex-status %{http_code}\\n' 2>"$err"
code=$?
grep '^@@docex-status ' "$err" | sed "s/^@@docex-status /\${DOCEX_CMD:-?} /" >> ${sh(curlLog)}
grep -v '^@@docex-status ' "$err" >&2
rm -f "$err"
exit $code
`,
  };
  for (const [name, text] of Object.entries(scripts)) {
    await writeFile(join(bin, name), text);
    await chmod(join(bin, name), 0o755);
  }
  return { bin, curlLog };
}
