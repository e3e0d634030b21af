import { startTestServer } from './support/harness.ts';
import { createSeeder } from './support/seed.ts';
import { resultListSql } from '../src/services/result-query.ts';
const t = await startTestServer({}, 'explain');
const seed = await createSeeder(t);
const benches = [await seed.benchmark(), await seed.benchmark()];
const site = await seed.site(); const flavor = await seed.flavor(site.id);
const tag = await seed.tag();
const em = t.server.context.orm.em.fork();
const N = 300000;
await em.execute(`insert into result (id, benchmark_id, site_id, flavor_id, json, execution_datetime, upload_datetime, uploader_iss, uploader_sub, hidden)
  select gen_random_uuid(), case when g % 10 = 0 then ?::uuid else ?::uuid end, ?::uuid, ?::uuid, jsonb_build_object('machine', jsonb_build_object('cpu', jsonb_build_object('count', g % 64)), 'result', jsonb_build_object('score', (g::bigint * 7919) % 5000 + 0.5), 'name', 'run ' || g),
    now() - (g || ' seconds')::interval, now(), ?, ?, g % 50 = 0 from generate_series(1, ${N}) g`, [benches[0]!.id, benches[1]!.id, site.id, flavor.id, seed.owner.uploader_iss, seed.owner.uploader_sub]);
await em.execute(`insert into result_tag select id, ? from result where json #>> '{machine,cpu,count}' = '7'`, [tag.id]);
await em.execute('analyze');
async function explain(label: string, query: any, scope: any = { visible: true }) {
  const { page, count } = resultListSql(query, scope);
  for (const [kind, f] of [['page', page], ['count', count]] as const) {
    const t0 = Date.now();
    const rows = await em.execute<any[]>(`explain (analyze, costs off) ${f.sql}`, f.params);
    console.log(`\n== ${label} [${kind}] ${Date.now() - t0} ms`);
    console.log(rows.map((r) => r['QUERY PLAN']).join('\n'));
  }
}
await explain('default', {});
await explain('benchmark + filters', { benchmark_id: benches[0]!.id, filters: ['machine.cpu.count >= 32', 'result.score < 2500'] });
await explain('equality filter', { filters: ['machine.cpu.count == 7'] });
await explain('tags', { tags_ids: [tag.id] });
await explain('json sort', { sort_by: '-json.result.score' });
await explain('terms', { terms: ['run'] , per_page: 100});
const { page } = resultListSql({ benchmark_id: benches[0]!.id, filters: ['machine.cpu.count == 8'], sort_by: '-json.result.score' }, { visible: true });
console.log('\nSQL:', em.getPlatform().formatQuery(page.sql, page.params));
await t.close();
