/**
 * What compiled JavaScript loads, read with the TypeScript parser (a regular expression would also
 * match `import` in strings and comments): static `import`/`export ... from`, `import('literal')`,
 * and `require('literal')` / `require.resolve('literal')` calls.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { join } from 'node:path';
import ts from 'typescript';

/** Every module specifier a JavaScript file loads, with how. */
export function specifiersOf(code: string, file = 'file.js'): { specifier: string; how: 'import' | 'require' }[] {
  const source = ts.createSourceFile(file, code, ts.ScriptTarget.Latest, false, ts.ScriptKind.JS);
  const found: { specifier: string; how: 'import' | 'require' }[] = [];
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      found.push({ specifier: node.moduleSpecifier.text, how: 'import' });
    } else if (ts.isCallExpression(node) && node.arguments.length > 0 && ts.isStringLiteralLike(node.arguments[0]!)) {
      const callee = node.expression;
      const specifier = node.arguments[0].text;
      if (callee.kind === ts.SyntaxKind.ImportKeyword) found.push({ specifier, how: 'import' });
      else if (ts.isIdentifier(callee) && callee.text === 'require') found.push({ specifier, how: 'require' });
      else if (ts.isPropertyAccessExpression(callee) && callee.getText(source) === 'require.resolve')
        found.push({ specifier, how: 'require' });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** A package name, not a relative path, an absolute one or a URL (`node:fs`, `file:`). */
const isBare = (specifier: string) => !/^(\.|\/|[a-z][a-z0-9+.-]*:)/i.test(specifier);

/** The package a bare specifier names: `@scope/name/sub/path` -> `@scope/name`, `ajv/dist/x` -> `ajv`. */
export function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

/** Every `.js` file under `dir`. */
export function javascriptFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return javascriptFiles(path);
    return entry.name.endsWith('.js') ? [path] : [];
  });
}

/** The packages (not Node's own modules) that the JavaScript files load, sorted. */
export function packagesLoadedBy(files: string[]): string[] {
  const names = new Set<string>();
  for (const file of files) {
    for (const { specifier } of specifiersOf(readFileSync(file, 'utf8'), file)) {
      if (isBare(specifier) && !isBuiltin(specifier)) names.add(packageOf(specifier));
    }
  }
  return [...names].sort();
}
