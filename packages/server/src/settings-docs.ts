/** The table of settings in docs/configuration.md, written between its markers by scripts/gen-settings.ts. */
import { type CommandName, SETTINGS, type Setting, shownDefault } from './settings.ts';

export const TABLE_BEGIN = '<!-- settings table: generated from packages/server/src/settings.ts by `npm run gen:settings` -->';
export const TABLE_END = '<!-- end of the settings table -->';

const ALL_COMMANDS: readonly CommandName[] = ['start', 'migrate', 'import-origin'];

const cell = (text: string) => text.replace(/\|/g, '\\|');
const code = (text: string) => `\`${text}\``;

function commandsOf(s: Setting): string {
  return ALL_COMMANDS.every((c) => s.commands.includes(c)) ? 'all' : s.commands.map(code).join(', ');
}

/** The markdown table: one row per setting, in declaration order. */
export function settingsTable(): string {
  const rows = (Object.values(SETTINGS) as Setting[]).map((s) => {
    const flag = code(s.arg ? `${s.flag} ${s.arg}` : s.flag);
    const shown = s.shown !== undefined ? s.shown : s.default === undefined || s.default === '' ? 'none' : code(shownDefault(s));
    return `| ${flag} | ${code(s.env)} | ${cell(shown)} | ${commandsOf(s)} | ${cell(s.help)} |`;
  });
  return ['| flag | environment | default | commands | meaning |', '|---|---|---|---|---|', ...rows].join('\n');
}

/** `document` with its table (between the markers) replaced by the one the declarations give. */
export function withSettingsTable(document: string): string {
  const begin = document.indexOf(TABLE_BEGIN);
  const end = document.indexOf(TABLE_END);
  if (begin < 0 || end < begin) throw new Error(`the document has no settings table: it needs the lines ${TABLE_BEGIN} and ${TABLE_END}.`);
  return `${document.slice(0, begin + TABLE_BEGIN.length)}\n${settingsTable()}\n${document.slice(end)}`;
}
