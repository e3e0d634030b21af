/**
 * A document's JavaScript and TypeScript examples as one module, run by Node with the workspace's
 * TypeScript loader, so that `@benchmarks/sdk` and the other packages resolve to their sources:
 *
 * - the blocks follow each other in document order, so a later one uses what an earlier one
 *   declared (top-level `const` and `let` become `var`, which a later block may declare again);
 * - imports are hoisted and merged;
 * - a statement whose comment states its value (`where(...).gte(4); // 'machine.cpu.count >= 4'`,
 *   `console.log(await client.health()); // { status: 'ok', version: '...' }`) is checked for it;
 * - before each block it prints `@@docex-block <line>` on stdout, which tells what each printed
 *   and which one failed.
 */
import ts from 'typescript';

interface Import {
  module: string;
  named: Map<string, string>;
  typeOnly: boolean;
  other: string[];
}

const IMPORT = /^import\s+(type\s+)?(.+?)\s+from\s+(['"])([^'"]+)\3;?\s*$/;

/** Splits a block into its single-line import statements and the rest. */
function splitImports(text: string, imports: Map<string, Import>): string {
  return text
    .split('\n')
    .map((line) => {
      const m = IMPORT.exec(line.trim());
      if (!m) return line;
      const [, typeOnly, clause, , module] = m;
      const key = `${typeOnly ? 'type ' : ''}${module}`;
      const entry: Import = imports.get(key) ?? { module: module!, named: new Map(), typeOnly: Boolean(typeOnly), other: [] };
      imports.set(key, entry);
      const named = /^\{(.*)\}$/.exec(clause!.trim());
      if (named) {
        for (const spec of named[1]!
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)) {
          const [name, local = name] = spec.split(/\s+as\s+/);
          entry.named.set(local!, spec);
          void name;
        }
      } else if (!entry.other.includes(clause!)) entry.other.push(clause!);
      return '';
    })
    .join('\n');
}

function importStatements(imports: Map<string, Import>): string[] {
  return [...imports.values()].flatMap((i) => {
    const kw = i.typeOnly ? 'import type' : 'import';
    const out = i.other.map((clause) => `${kw} ${clause} from '${i.module}';`);
    if (i.named.size) out.push(`${kw} { ${[...i.named.values()].join(', ')} } from '${i.module}';`);
    return out;
  });
}

/** The literal a trailing `// ...` comment states, if it is one (a string, number, object or array literal). */
function claimedLiteral(comment: string): string | undefined {
  const text = comment.replace(/^\/\/\s*/, '').trim();
  if (!/^['"{[\d-]/.test(text)) return undefined;
  const file = ts.createSourceFile('claim.ts', `(${text});`, ts.ScriptTarget.ES2022, true);
  const [statement] = file.statements;
  if (file.statements.length !== 1 || !statement || !ts.isExpressionStatement(statement)) return undefined;
  // A comment that is prose in quotes (`// 'a' and 'b'`) does not parse as one literal.
  if ((file as unknown as { parseDiagnostics: unknown[] }).parseDiagnostics.length) return undefined;
  const expr = (statement.expression as ts.ParenthesizedExpression).expression;
  const literal =
    ts.isStringLiteral(expr) || ts.isNumericLiteral(expr) || ts.isObjectLiteralExpression(expr) || ts.isArrayLiteralExpression(expr);
  return literal ? text : undefined;
}

/**
 * One block, rewritten for a shared module: `const`/`let` at the top level become `var`, and
 * statements with a claimed value are wrapped in `__docexClaim(where, value, claim)`.
 */
function rewriteBlock(code: string, where: string): string {
  const file = ts.createSourceFile('block.ts', code, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
  const edits: { start: number; end: number; text: string }[] = [];
  for (const statement of file.statements) {
    if (ts.isVariableStatement(statement)) {
      const list = statement.declarationList;
      if (list.flags & (ts.NodeFlags.Const | ts.NodeFlags.Let)) {
        const start = list.getStart(file);
        edits.push({ start, end: start + (list.flags & ts.NodeFlags.Const ? 5 : 3), text: 'var' });
      }
    }
    if (!ts.isExpressionStatement(statement)) continue;
    const comment = ts.getTrailingCommentRanges(code, statement.end)?.[0];
    const claim = comment && claimedLiteral(code.slice(comment.pos, comment.end));
    if (!claim) continue;
    const line = file.getLineAndCharacterOfPosition(statement.getStart(file)).line;
    const at = JSON.stringify(`${where}, line ${line + 1} of the block`);
    const expr = statement.expression;
    const logged =
      ts.isCallExpression(expr) && expr.getText(file).startsWith('console.log(') && expr.arguments.length === 1 ? expr.arguments[0]! : expr;
    edits.push({ start: logged.getStart(file), end: logged.end, text: `__docexClaim(${at}, ${logged.getText(file)}, (${claim}))` });
  }
  let out = code;
  for (const edit of edits.sort((a, b) => b.start - a.start)) out = out.slice(0, edit.start) + edit.text + out.slice(edit.end);
  return out;
}

export interface JsBlock {
  /** `docs/sdk.md:52`. */
  where: string;
  line: number;
  code: string;
}

/**
 * The module: `prelude` (what the examples take as given: a client, a benchmark id, ...) then each
 * block. `claims` is the module that exports `checkClaim` (doc-shapes.ts).
 */
export function jsModule(prelude: string, blocks: JsBlock[], claims: string): string {
  const imports = new Map<string, Import>();
  const bodies = [
    rewriteBlock(splitImports(prelude, imports), 'the prelude'),
    ...blocks.map(
      (b) =>
        `// ---- ${b.where}\nprocess.stdout.write('\\n@@docex-block ${b.line}\\n');\n${rewriteBlock(splitImports(b.code, imports), b.where)}`,
    ),
  ];
  return [
    `import { checkClaim as __docexClaim } from ${JSON.stringify(claims)};`,
    ...importStatements(imports),
    ...bodies,
    "process.stdout.write('\\n@@docex-block end\\n');",
  ].join('\n');
}

/** What each block printed, by the line of its fence, from the module's stdout; `failedAt`: the block that did not end. */
export function outputsByBlock(stdout: string): { outputs: Map<number, string>; failedAt?: number } {
  const outputs = new Map<number, string>();
  const parts = stdout.split(/\n@@docex-block (\d+|end)\n/);
  let last: string | undefined;
  for (let i = 1; i < parts.length; i += 2) {
    last = parts[i];
    if (last !== 'end') outputs.set(Number(last), parts[i + 1] ?? '');
  }
  return { outputs, failedAt: last === 'end' || last === undefined ? undefined : Number(last) };
}
