/** Pieces every view shares: links, answers' states, "Copy as", filters built from the schema, warnings. */
import { where } from '@benchmarks/sdk';
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { type Answer, type Call, copyAs, navigate, withParams } from './api.ts';
import { numeric, type SchemaPath } from './schema.ts';

/** A link that stays in the page (a new history entry) on a plain click. */
export function Link(props: { href: string; children: ComponentChildren; class?: string }) {
  const click = (e: MouseEvent) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(props.href);
  };
  return (
    <a href={props.href} class={props.class} onClick={click}>
      {props.children}
    </a>
  );
}

/** A sentence in place of an answer (empty, slow, failed), with a retry where one helps. */
export const Note = ({ text, retry, alert }: { text: string; retry?: () => void; alert?: boolean }) => (
  <p class={alert ? 'note error' : 'note'} role={alert ? 'alert' : 'status'}>
    {text}{' '}
    {retry && (
      <button type="button" onClick={retry}>
        Retry
      </button>
    )}
  </p>
);

/** The sentence of an answer not (yet) there; null once it is. */
export function Pending({ answer, what }: { answer: Answer<unknown>; what: string }) {
  if (answer.state === 'done') return null;
  if (answer.state === 'loading') return <Note text={`Loading ${what}…`} />;
  if (answer.state === 'slow') return <Note text={`The server is slow to answer with ${what}; still waiting.`} retry={answer.retry} />;
  return <Note alert text={`Could not load ${what}: ${answer.error}`} retry={answer.retry} />;
}

/** "Copy as curl / SDK / CLI": the commands that fetch what the view shows. */
export function CopyAs({ call }: { call: Call }) {
  const commands = copyAs(call);
  const [copied, setCopied] = useState('');
  const copy = (kind: keyof typeof commands) =>
    navigator.clipboard?.writeText(commands[kind]).then(
      () => setCopied(`${kind} command copied`),
      () => setCopied('copying was refused: select the text below'),
    );
  return (
    <details class="copy">
      <summary>Copy as curl / SDK / CLI</summary>
      {(['curl', 'sdk', 'cli'] as const).map((kind) => (
        <div key={kind} class="command">
          <button type="button" onClick={() => void copy(kind)}>
            Copy {kind === 'sdk' ? 'SDK' : kind === 'cli' ? 'CLI' : 'curl'}
          </button>
          <pre data-kind={kind}>{commands[kind]}</pre>
        </div>
      ))}
      <p role="status" class="note">
        {copied}
      </p>
    </details>
  );
}

type Warning = { code: string; parameter: string; path: string; suggestion: string | null; message: string };

/** The server's warnings (a path the schema does not describe), each with its suggestion as a button. */
export function Warnings({ warnings, filters }: { warnings?: Warning[]; filters: string[] }) {
  if (!warnings?.length) return null;
  const use = (w: Warning) => {
    const bare = (p: string) => p.replace(/^json\./, '');
    const fix = (f: string) =>
      f.replace(new RegExp(`^(json\\.)?${bare(w.path).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?= )`), w.suggestion!);
    navigate(withParams(w.parameter === 'filters' ? { filters: filters.map(fix) } : { [w.parameter]: w.suggestion! }));
  };
  return (
    <ul class="warnings" aria-label="Warnings from the server">
      {warnings.map((w) => (
        <li key={w.path + w.parameter}>
          <strong>Warning:</strong> {w.message}{' '}
          {w.suggestion && (
            <button type="button" onClick={() => use(w)}>
              Use {w.suggestion}
            </button>
          )}
        </li>
      ))}
    </ul>
  );
}

const OPERATORS = ['==', '>', '<', '>=', '<='] as const;

/** The JSON filters of the view (`filters`), removable, and a form to add one with an input typed by the schema. */
export function Filters({ paths, filters }: { paths: SchemaPath[]; filters: string[] }) {
  const [path, setPath] = useState(paths[0]?.path ?? '');
  const [op, setOp] = useState<(typeof OPERATORS)[number]>('>=');
  const [value, setValue] = useState('');
  const [problem, setProblem] = useState('');
  const type = paths.find((p) => p.path === path)?.type;
  const add = (e: Event) => {
    e.preventDefault();
    try {
      const v = type === 'number' || type === 'integer' ? Number(value) : type === 'boolean' ? value === 'true' : value;
      if (typeof v === 'number' && (value.trim() === '' || !Number.isFinite(v))) throw new TypeError('Give a number.');
      const filter = String(where(path.trim())[({ '==': 'eq', '>': 'gt', '<': 'lt', '>=': 'gte', '<=': 'lte' } as const)[op]](v));
      setProblem('');
      navigate(withParams({ filters: [...filters, filter] }));
    } catch (err) {
      setProblem((err as Error).message);
    }
  };
  return (
    <fieldset class="filters">
      <legend>Filters</legend>
      {filters.length > 0 && (
        <ul class="chips">
          {filters.map((f, i) => (
            <li key={f}>
              <code>{f}</code>{' '}
              <button
                type="button"
                aria-label={`Remove filter ${f}`}
                onClick={() => navigate(withParams({ filters: filters.filter((_, j) => j !== i) }))}
              >
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
      <form onSubmit={add} class="row">
        <label>
          Path
          <input list="schema-paths" value={path} placeholder={paths[0]?.path} onInput={(e) => setPath(e.currentTarget.value)} required />
        </label>
        <datalist id="schema-paths">
          {paths.map((p) => (
            <option key={p.path} value={p.path}>
              {p.type}
            </option>
          ))}
        </datalist>
        <label>
          Operator
          <select value={op} onChange={(e) => setOp(e.currentTarget.value as typeof op)}>
            {OPERATORS.map((o) => (
              <option key={o}>{o}</option>
            ))}
          </select>
        </label>
        <label for="filter-value">
          Value{type ? ` (${type})` : ''}
          {type === 'boolean' ? (
            <select id="filter-value" value={value} onChange={(e) => setValue(e.currentTarget.value)}>
              <option value="true">true</option>
              <option value="false">false</option>
            </select>
          ) : type === 'number' || type === 'integer' ? (
            <input
              id="filter-value"
              type="number"
              step={type === 'integer' ? 1 : 'any'}
              value={value}
              onInput={(e) => setValue(e.currentTarget.value)}
              required
            />
          ) : (
            <input id="filter-value" type="text" value={value} onInput={(e) => setValue(e.currentTarget.value)} required />
          )}
        </label>
        <button type="submit">Add filter</button>
      </form>
      {problem && <Note alert text={problem} />}
    </fieldset>
  );
}

/** The other result filters in the URL (flavor_id, tags_ids, dates…), each removable. */
export function OtherFilters({ search, keys }: { search: URLSearchParams; keys: readonly string[] }) {
  const shown = [...search.entries()].filter(([k]) => keys.includes(k));
  if (!shown.length) return null;
  return (
    <ul class="chips" aria-label="Other filters">
      {shown.map(([k, v]) => (
        <li key={k + v}>
          <code>
            {k} = {v}
          </code>{' '}
          <button
            type="button"
            aria-label={`Remove ${k} ${v}`}
            onClick={() => navigate(withParams({ [k]: search.getAll(k).filter((x) => x !== v) }))}
          >
            ×
          </button>
        </li>
      ))}
    </ul>
  );
}

/** A select bound to one URL parameter. */
export function Choice(props: {
  label: string;
  name: string;
  value: string;
  options: [string, string][];
  set?: (value: string) => Record<string, string | undefined>;
}) {
  const pick = (v: string) => navigate(withParams(props.set ? props.set(v) : { [props.name]: v || undefined }));
  return (
    <label>
      {props.label}
      <select value={props.value} onChange={(e) => pick(e.currentTarget.value)}>
        {props.options.map(([v, text]) => (
          <option key={v} value={v}>
            {text}
          </option>
        ))}
      </select>
    </label>
  );
}

/** A table that scrolls sideways on a narrow screen, reachable by keyboard. */
export const Scroll = ({ label, children }: { label: string; children: ComponentChildren }) => (
  // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must take the focus to scroll by keyboard (axe: scrollable-region-focusable)
  <section class="scroll" tabIndex={0} aria-label={label}>
    {children}
  </section>
);

/** A table's header row (false leaves a column out). */
export const Head = ({ cols }: { cols: (string | false)[] }) => (
  <thead>
    <tr>
      {cols
        .filter((c): c is string => c !== false)
        .map((c) => (
          <th key={c} scope="col">
            {c}
          </th>
        ))}
    </tr>
  </thead>
);

/**
 * The metric (the view's own, then the schema's numbers) and the grouping of a view over groups.
 * A baseline is a flavor or a site: it does not carry over to the other grouping.
 */
export function MetricAndGroup({ search, paths }: { search: URLSearchParams; paths: SchemaPath[] }) {
  const metric = search.get('metric') ?? '';
  const metrics = [...new Set([metric, ...paths.filter(numeric).map((p) => p.path)])].filter(Boolean);
  return (
    <>
      <Choice label="Metric" name="metric" value={metric} options={metrics.map((m) => [m, m])} />
      <Choice
        label="Group by"
        name="group_by"
        value={search.get('group_by') === 'site' ? 'site' : 'flavor'}
        set={(v) => ({ group_by: v, baseline: undefined })}
        options={[
          ['flavor', 'flavor'],
          ['site', 'site'],
        ]}
      />
    </>
  );
}
