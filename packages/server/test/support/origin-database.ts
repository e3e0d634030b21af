/**
 * A database of the original service (the public service this server re-implements), for the
 * tests of `benchmarks-server import-origin` and the measurement of its speed. The DDL below is this
 * project's record of the original's schema, written from a description of its alembic migrations
 * (not copied from its code; docs/migrating.md maps each table): the enum `resourcestatus`, naive
 * timestamps, a nullable status, `deleted` results, the claim linked from its result
 * (`_claim_report_id`) and the review queue's `submit` rows.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createTestDatabase } from './database.ts';

export const ORIGIN_DDL = `
  create type resourcestatus as enum ('on_review', 'approved');
  create table "user" (
    sub text not null,
    iss text not null,
    email text not null,
    registration_datetime timestamp not null,
    primary key (sub, iss)
  );
  create table submit (
    id uuid primary key,
    resource_type varchar,
    upload_datetime timestamp
  );
  create table tag (
    id uuid primary key,
    name text not null unique,
    description text
  );
  create table benchmark (
    id uuid primary key,
    uploader_sub text not null,
    uploader_iss text not null,
    upload_datetime timestamp not null,
    status resourcestatus,
    docker_image text not null,
    docker_tag text not null,
    url text not null,
    json_schema json not null,
    description text,
    _submit_report_id uuid references submit (id),
    unique (docker_image, docker_tag),
    foreign key (uploader_iss, uploader_sub) references "user" (iss, sub)
  );
  create table site (
    id uuid primary key,
    uploader_sub text not null,
    uploader_iss text not null,
    upload_datetime timestamp not null,
    status resourcestatus,
    name text not null unique,
    address text not null,
    description text,
    _submit_report_id uuid references submit (id),
    foreign key (uploader_iss, uploader_sub) references "user" (iss, sub)
  );
  create table flavor (
    id uuid primary key,
    uploader_sub text not null,
    uploader_iss text not null,
    upload_datetime timestamp not null,
    status resourcestatus,
    name text not null,
    description text,
    site_id uuid not null references site (id),
    _submit_report_id uuid references submit (id),
    unique (site_id, name),
    foreign key (uploader_iss, uploader_sub) references "user" (iss, sub)
  );
  create table claim (
    id uuid primary key,
    uploader_sub text not null,
    uploader_iss text not null,
    status resourcestatus,
    message text not null,
    resource_type varchar,
    upload_datetime timestamp not null,
    _submit_report_id uuid references submit (id),
    foreign key (uploader_iss, uploader_sub) references "user" (iss, sub)
  );
  create table result (
    id uuid primary key,
    uploader_sub text not null,
    uploader_iss text not null,
    upload_datetime timestamp not null,
    deleted boolean not null default false,
    json jsonb not null,
    execution_datetime timestamp not null,
    benchmark_id uuid not null references benchmark (id),
    flavor_id uuid not null references flavor (id),
    site_id uuid not null references site (id),
    _claim_report_id uuid references claim (id),
    foreign key (uploader_iss, uploader_sub) references "user" (iss, sub)
  );
  create table result_tags (
    result_id uuid not null references result (id),
    tag_id uuid not null references tag (id) on delete cascade,
    primary key (result_id, tag_id)
  );`;

/** A fresh database on the test cluster holding the original service's (empty) schema; its URL. */
export async function createOriginDatabase(label = 'origin'): Promise<string> {
  const url = await createTestDatabase(label);
  await withClient(url, (client) => client.query(ORIGIN_DDL));
  return url;
}

/** Runs `work` on a connection of its own to `url`. */
export async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Inserts one row into a table of the original schema: `values` maps columns to values. */
export async function insertRow(client: pg.Client, table: string, values: Record<string, unknown>): Promise<void> {
  const columns = Object.keys(values);
  await client.query(
    `insert into ${client.escapeIdentifier(table)} (${columns.map((c) => client.escapeIdentifier(c)).join(', ')}) values (${columns
      .map((_, i) => `$${i + 1}`)
      .join(', ')})`,
    Object.values(values),
  );
}

export const ORIGIN_ISSUER = 'https://aai-dev.egi.eu/oidc';

/** The ids of a small approved catalogue that generated results refer to. */
export interface GeneratedCatalogue {
  user: { sub: string; iss: string };
  benchmark: string;
  flavors: { id: string; site: string }[];
  tags: string[];
}

/**
 * A catalogue of one benchmark (a c-ray-like schema), two sites of two flavors each and three tags,
 * all approved, uploaded by one user: what generateResults fills with results.
 */
export async function generateCatalogue(client: pg.Client): Promise<GeneratedCatalogue> {
  const user = { sub: `gen-${randomUUID().slice(0, 8)}`, iss: ORIGIN_ISSUER };
  await insertRow(client, 'user', { ...user, email: `${user.sub}@example.org`, registration_datetime: '2021-03-01 10:00:00' });
  const uploaded = { uploader_sub: user.sub, uploader_iss: user.iss, upload_datetime: '2021-03-02 10:00:00', status: 'approved' };
  const benchmark = randomUUID();
  const schema = {
    type: 'object',
    required: ['machine', 'result'],
    properties: {
      machine: { type: 'object', properties: { cpu: { type: 'object', required: ['count'], properties: { count: { type: 'integer' } } } } },
      result: { type: 'object', required: ['score'], properties: { score: { type: 'number', suggestToUser: true } } },
    },
  };
  await insertRow(client, 'benchmark', {
    id: benchmark,
    ...uploaded,
    docker_image: `gen/c-ray-${user.sub}`,
    docker_tag: '1.0',
    url: 'https://example.org/c-ray',
    json_schema: JSON.stringify(schema),
  });
  const flavors: GeneratedCatalogue['flavors'] = [];
  for (const s of [0, 1]) {
    const site = randomUUID();
    await insertRow(client, 'site', { id: site, ...uploaded, name: `GEN-SITE-${s}-${user.sub}`, address: `Street ${s}` });
    for (const f of [0, 1]) {
      const id = randomUUID();
      await insertRow(client, 'flavor', { id, ...uploaded, name: `gen.flavor-${f}`, site_id: site });
      flavors.push({ id, site });
    }
  }
  const tags: string[] = [];
  for (const t of [0, 1, 2]) {
    const id = randomUUID();
    await insertRow(client, 'tag', { id, name: `gen-tag-${t}-${user.sub}` });
    tags.push(id);
  }
  return { user, benchmark, flavors, tags };
}

/**
 * Generates `count` results of the generated catalogue in one statement (a realistic document of
 * about 400 bytes each, one tag on every third result, every 500th deleted), for measurements.
 */
export async function generateResults(client: pg.Client, catalogue: GeneratedCatalogue, count: number): Promise<void> {
  const flavorIds = catalogue.flavors.map((f) => f.id);
  const siteIds = catalogue.flavors.map((f) => f.site);
  await client.query(
    `with inserted as (
       insert into result (id, uploader_sub, uploader_iss, upload_datetime, deleted, json, execution_datetime, benchmark_id, flavor_id, site_id)
       select gen_random_uuid(), $1, $2, timestamp '2022-01-01' + i * interval '1 minute', i % 500 = 0,
         jsonb_build_object(
           'arguments', 'c-ray -s 1600x1200 -r 8 -i scenes/sphfract.scn',
           'machine', jsonb_build_object('cpu', jsonb_build_object('arch', 'X86_64', 'bits', 64, 'brand_raw', 'AMD EPYC 7742 64-Core Processor', 'count', 2 + i % 62, 'hz_actual_friendly', '2.2500 GHz')),
           'result', jsonb_build_object('all_results', '2270.123:2271.456:2269.789', 'score', 2000 + (i % 1000) / 3.0),
           'test', 'c-ray', 'units', 'Seconds'),
         timestamp '2021-12-31' + i * interval '1 minute', $3, ($4::uuid[])[1 + i % 4], ($5::uuid[])[1 + i % 4]
       from generate_series(1, $6) as i
       returning id)
     insert into result_tags (result_id, tag_id)
     select id, ($7::uuid[])[1 + (abs(hashtext(id::text)) % 3)] from inserted where abs(hashtext(id::text) / 3) % 3 = 0`,
    [catalogue.user.sub, catalogue.user.iss, catalogue.benchmark, flavorIds, siteIds, count, catalogue.tags],
  );
}
