/** Pieces every view shares: links, answers' states, "Copy as", filters built from the schema, warnings, tables. */
import { where } from '@benchmarks/sdk';
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { type Answer, type Call, copyAs, navigate, type Query, RESULT_FILTERS, apiUrl, withParams } from './api.ts';
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

const COMMANDS = { curl: 'curl', sdk: 'SDK', cli: 'CLI' } as const;

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
      {(Object.keys(COMMANDS) as (keyof typeof COMMANDS)[]).map((kind) => (
        <div key={kind} class="command">
          <button type="button" onClick={() => void copy(kind)}>
            Copy {COMMANDS[kind]}
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

/** The links that download a view's answer in other formats of its operation (`format=csv`, `format=svg`). */
export function Downloads({ path, query, name }: { path: string; query: Query; name: string }) {
  const link = (format: string) => (
    <a href={apiUrl(path, { ...query, format })} download={`${name}.${format}`}>
      {format.toUpperCase()}
    </a>
  );
  return (
    <>
      Download: {link('csv')} {link('svg')}
    </>
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

/** Removable chips: each its text and the URL parameters without it. */
const Chips = ({ label, chips }: { label?: string; chips: { text: string; remove: string; without: Query }[] }) => (
  <ul class="chips" aria-label={label}>
    {chips.map((c) => (
      <li key={c.text}>
        <code>{c.text}</code>{' '}
        <button type="button" aria-label={c.remove} onClick={() => navigate(withParams(c.without))}>
          ×
        </button>
      </li>
    ))}
  </ul>
);

const OPERATORS = { '==': 'eq', '>': 'gt', '<': 'lt', '>=': 'gte', '<=': 'lte' } as const;

/** The JSON filters of the view (`filters`), removable, and a form to add one with an input typed by the schema. */
export function Filters({ paths, filters }: { paths: SchemaPath[]; filters: string[] }) {
  const [path, setPath] = useState(paths[0]?.path ?? '');
  const [op, setOp] = useState<keyof typeof OPERATORS>('>=');
  const [value, setValue] = useState('');
  const [problem, setProblem] = useState('');
  const type = paths.find((p) => p.path === path)?.type;
  const number = type === 'number' || type === 'integer';
  const add = (e: Event) => {
    e.preventDefault();
    try {
      const v = number ? Number(value) : type === 'boolean' ? value === 'true' : value;
      if (typeof v === 'number' && (value.trim() === '' || !Number.isFinite(v))) throw new TypeError('Give a number.');
      const filter = String(where(path.trim())[OPERATORS[op]](v));
      setProblem('');
      navigate(withParams({ filters: [...filters, filter] }));
    } catch (err) {
      setProblem((err as Error).message);
    }
  };
  const set = (e: { currentTarget: { value: string } }) => setValue(e.currentTarget.value);
  const input = { id: 'filter-value', value, onInput: set, required: true };
  return (
    <fieldset class="filters">
      <legend>Filters</legend>
      {filters.length > 0 && (
        <Chips
          chips={filters.map((f, i) => ({
            text: f,
            remove: `Remove filter ${f}`,
            without: { filters: filters.filter((_, j) => j !== i) },
          }))}
        />
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
            {Object.keys(OPERATORS).map((o) => (
              <option key={o}>{o}</option>
            ))}
          </select>
        </label>
        <label for="filter-value">
          Value{type ? ` (${type})` : ''}
          {type === 'boolean' ? (
            <select id="filter-value" value={value} onChange={set}>
              <option value="true">true</option>
              <option value="false">false</option>
            </select>
          ) : number ? (
            <input {...input} type="number" step={type === 'integer' ? 1 : 'any'} />
          ) : (
            <input {...input} type="text" />
          )}
        </label>
        <button type="submit">Add filter</button>
      </form>
      {problem && <Note alert text={problem} />}
    </fieldset>
  );
}

/** The result filters in the URL other than the benchmark and the JSON filters (flavor_id, tags_ids, dates…, and `more`), each removable. */
export function OtherFilters({ search, more = [] }: { search: URLSearchParams; more?: string[] }) {
  const keys: string[] = [...RESULT_FILTERS.filter((k) => k !== 'benchmark_id' && k !== 'filters'), ...more];
  const shown = [...search.entries()].filter(([k]) => keys.includes(k));
  if (!shown.length) return null;
  const chips = shown.map(([k, v]) => ({
    text: `${k} = ${v}`,
    remove: `Remove ${k} ${v}`,
    without: { [k]: search.getAll(k).filter((x) => x !== v) },
  }));
  return <Chips label="Other filters" chips={chips} />;
}

/** A select bound to one URL parameter: its options' values, shown as `text` gives them. */
export function Choice(props: {
  label: string;
  name: string;
  value: string;
  options: string[];
  text?: (value: string) => string;
  set?: (value: string) => Record<string, string | undefined>;
}) {
  const pick = (v: string) => navigate(withParams(props.set ? props.set(v) : { [props.name]: v || undefined }));
  return (
    <label>
      {props.label}
      <select value={props.value} onChange={(e) => pick(e.currentTarget.value)}>
        {props.options.map((v) => (
          <option key={v} value={v}>
            {props.text ? props.text(v) : v}
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

/** A table in its scrolling region: its caption, its header row (false leaves a column out) and its rows. */
export const Table = (props: {
  label: string;
  caption?: string;
  id?: string;
  class?: string;
  cols: (string | false)[];
  children: ComponentChildren;
}) => (
  <Scroll label={props.label}>
    <table id={props.id} class={props.class}>
      <caption>{props.caption ?? props.label}</caption>
      <thead>
        <tr>
          {props.cols.map(
            (c) =>
              c !== false && (
                <th key={c} scope="col">
                  {c}
                </th>
              ),
          )}
        </tr>
      </thead>
      <tbody>{props.children}</tbody>
    </table>
  </Scroll>
);

/**
 * The metric (the view's own, then the schema's numbers) and the grouping of a view over groups.
 * A baseline is a flavor or a site: it does not carry over to the other grouping.
 */
export function MetricAndGroup({ search, paths }: { search: URLSearchParams; paths: SchemaPath[] }) {
  const metric = search.get('metric') ?? '';
  return (
    <>
      <Choice
        label="Metric"
        name="metric"
        value={metric}
        options={[...new Set([metric, ...paths.filter(numeric).map((p) => p.path)])].filter(Boolean)}
      />
      <Choice
        label="Group by"
        name="group_by"
        value={search.get('group_by') === 'site' ? 'site' : 'flavor'}
        set={(v) => ({ group_by: v, baseline: undefined })}
        options={['flavor', 'site']}
      />
    </>
  );
}
