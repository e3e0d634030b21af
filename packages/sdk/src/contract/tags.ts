import { Type } from '@sinclair/typebox';
import { NameInput, OptionalText, ReadOnlyEcho, Tag } from './catalogue-schemas.ts';
import { reviewedOperations } from './reviewed.ts';

const TagFields = {
  name: NameInput('Human-readable feature name, unique.'),
  description: OptionalText('Context of the label.'),
};

export const TagInput = Type.Object(TagFields, { $id: 'TagInput', additionalProperties: false });

/** The body of an update: the creation body, and the tag's read-only fields as a GET shows them. */
export const TagUpdate = Type.Object(
  { ...TagFields, ...ReadOnlyEcho(Tag, ['id', 'status']) },
  { $id: 'TagUpdate', additionalProperties: false },
);

/** Tags carry no upload_datetime in responses, so it is no sort field (it still filters). */
export const TagSort = {
  fields: ['id', 'name', 'description', 'status'] as const,
  default: '+name',
};

export const tagOperations = reviewedOperations({
  name: 'Tag',
  tag: 'tags',
  item: Tag,
  input: TagInput,
  update: TagUpdate,
  sort: TagSort,
  filters: { name: Type.Optional(Type.String({ maxLength: 200, description: 'Exact name.' })) },
  text: {
    list: 'Exact filter on name',
    search: 'the name or the description',
    create:
      'The tag starts on_review (approved at once when an administrator submits it, or on a server started with REVIEW_TAGS=false). ' +
      'A taken name: 409 DUPLICATE.',
    update: ['an absent description becomes null', 'Status and uploader', 'id, status'],
    delete:
      'A tag carried by results: 409 REFERENCED with their `count`, unless `cascade=true`, which removes the tag ' +
      'from those results (the results stay).',
  },
});
