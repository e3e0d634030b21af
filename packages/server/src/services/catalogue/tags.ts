import type { Static } from '@sinclair/typebox';
import { type TagInput, TagSort, TagUpdate } from '@benchmarks/sdk/contract/tags';
import { readOnlyFields } from '@benchmarks/sdk/contract/catalogue-schemas';
import { Tag, type TagRow } from '../../entities/catalogue.ts';
import { COUNTS, type ReferenceCounts, trimmed, type CatalogueKind } from './catalogue.ts';
import { Where } from '../../db/sql.ts';
import { tagView } from './views.ts';

export const tags: CatalogueKind<TagRow, ReturnType<typeof tagView>> = {
  type: 'tag',
  label: 'Tag',
  table: 'tag',
  entity: Tag,
  view: tagView,
  title: (row) => row.name,
  duplicate: (f) => `Tag ${f.name} already exists.`,
  sort: TagSort,
  searchColumns: ['name', 'description'],
  readOnly: readOnlyFields(TagUpdate),
  references: {
    async count(em, id) {
      const [row] = await em.execute<ReferenceCounts[]>(
        `select ${COUNTS} from result_tag join result on result.id = result_id where tag_id = ?`,
        [id],
      );
      return row!;
    },
    // A tag's cascade unlinks it from its results; the results stay.
    async cascade(em, id) {
      await em.execute('delete from result_tag where tag_id = ?', [id]);
    },
    cascadeHint: 'remove the tag from them (the results stay)',
  },
};

export function tagFields(body: Static<typeof TagInput>): Partial<TagRow> {
  return { name: trimmed(body.name, 'name'), description: body.description ?? null };
}

/** The exact filter of GET /tags. */
export function tagFilters(query: { name?: string }): Where {
  const where = new Where();
  if (query.name !== undefined) where.add('name = ?', query.name);
  return where;
}
