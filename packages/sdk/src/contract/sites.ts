import { Type } from '@sinclair/typebox';
import { NameInput, OptionalText, ReadOnlyEcho, Site } from './catalogue-schemas.ts';
import { reviewedOperations } from './reviewed.ts';

const SiteFields = {
  name: NameInput('Human-readable institution name, unique.'),
  address: NameInput('Physical or virtual address shown to the community.', 500),
  description: OptionalText('Short description.'),
};

export const SiteInput = Type.Object(SiteFields, { $id: 'SiteInput', additionalProperties: false });

/** The body of an update: the creation body, and the site's read-only fields as a GET shows them. */
export const SiteUpdate = Type.Object(
  { ...SiteFields, ...ReadOnlyEcho(Site, ['id', 'status', 'upload_datetime']) },
  { $id: 'SiteUpdate', additionalProperties: false },
);

export const SiteSort = {
  fields: ['id', 'name', 'address', 'description', 'status', 'upload_datetime'] as const,
  default: '+name',
};

export const siteOperations = reviewedOperations({
  name: 'Site',
  tag: 'sites',
  item: Site,
  input: SiteInput,
  update: SiteUpdate,
  sort: SiteSort,
  filters: {
    name: Type.Optional(Type.String({ maxLength: 200, description: 'Exact name.' })),
    address: Type.Optional(Type.String({ maxLength: 500, description: 'Exact address.' })),
  },
  text: {
    list: 'Exact filters on name and address',
    search: 'the name, the address or the description',
    create: 'The site starts on_review (approved at once when an administrator submits it). A taken name: 409 DUPLICATE.',
    update: ['an absent description becomes null', 'Status and uploader', 'id, status, upload_datetime'],
    delete:
      'A site with flavors or results: 409 REFERENCED (`count` results, `flavors`), unless `cascade=true`, which ' +
      'deletes its flavors and every result at the site too.',
    approve: 'Approves the site only, not its flavors. ',
    reject:
      'Its flavors on review go with it. An approved site: 409 ALREADY_APPROVED; a site with an approved flavor ' +
      'or with results: 409 REFERENCED (use DELETE with cascade).',
  },
});
