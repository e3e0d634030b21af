/**
 * The Kubernetes manifests in deploy/kubernetes stay in step with the server: every setting they
 * give (ConfigMap keys, container env) is an option `benchmarks-server` reads, the probes use the
 * server's health and readiness paths, the migrate Job runs `migrate`, the pods do not migrate, and
 * every file the kustomization lists exists.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { program } from '../packages/server/src/program.ts';
import { ROOT } from './support/run.ts';

const DIR = join(ROOT, 'deploy', 'kubernetes');
const read = (name: string) => readFileSync(join(DIR, name), 'utf8');

/** Every environment variable an option of `start` or `migrate` reads. */
function serverEnvironment(): Set<string> {
  const names = new Set<string>();
  for (const command of program().commands) {
    for (const option of command.options) if (option.envVar) names.add(option.envVar);
  }
  return names;
}

/** The setting names a manifest gives: ConfigMap/Secret data keys and `- name:` entries under `env:`. */
function settingsOf(text: string): string[] {
  const names: string[] = [];
  let section: 'data' | 'env' | null = null;
  for (const line of text.split('\n')) {
    if (/^(data|stringData):\s*$/.test(line)) section = 'data';
    else if (/^\s+env:\s*$/.test(line)) section = 'env';
    else if (/^\S/.test(line)) section = null;
    const data = section === 'data' ? /^ {2}([A-Z][A-Z0-9_]*):/.exec(line) : null;
    const env = section === 'env' ? /^\s+- name: ([A-Z][A-Z0-9_]*)\s*$/.exec(line) : null;
    if (data) names.push(data[1]!);
    if (env) names.push(env[1]!);
  }
  return names;
}

test('every setting the manifests give is an option of benchmarks-server', () => {
  const known = serverEnvironment();
  assert.ok(known.has('DATABASE_URL') && known.has('WORKERS') && known.has('DATABASE_READ_URL'), 'options read from program.ts');
  const files = readdirSync(DIR).filter((f) => f.endsWith('.yaml'));
  let checked = 0;
  for (const file of files) {
    for (const name of settingsOf(read(file))) {
      assert.ok(known.has(name), `${file}: ${name} is not an option of benchmarks-server`);
      checked++;
    }
  }
  assert.ok(checked >= 12, `settings found: ${checked}`);
});

test('the kustomization lists existing files; probes, the migrate Job and MIGRATE=false as deploy.md describes', () => {
  const kustomization = read('kustomization.yaml');
  const resources = [...kustomization.matchAll(/^ {2}- (\S+\.yaml)$/gm)].map((m) => m[1]!);
  assert.ok(resources.length >= 5, kustomization);
  for (const file of resources) assert.ok(existsSync(join(DIR, file)), `${file} is listed and exists`);
  assert.not.ok(resources.includes('secret.example.yaml'), 'the example Secret is not applied');
  const deployment = read('deployment.yaml');
  assert.match(deployment, /readinessProbe:\n\s+httpGet: \{ path: \/api\/v1\/ready, port: http \}/);
  assert.match(deployment, /livenessProbe:\n\s+httpGet: \{ path: \/api\/v1\/health, port: http \}/);
  assert.match(deployment, /- name: MIGRATE\n\s+value: "false"/);
  assert.match(read('migrate-job.yaml'), /args: \["migrate"\]/);
  assert.match(read('pdb.yaml'), /kind: PodDisruptionBudget/);
});

test.run();
