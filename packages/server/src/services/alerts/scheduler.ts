/**
 * Keeps watched series segmented (docs/alerts.md): every write to results (any process's: the
 * change notifications, db/change-listener.ts) marks the watches of the benchmarks it wrote to due
 * (all of them when the notification does not say which), and they are refreshed at
 * most once per WATCH_REFRESH_INTERVAL, so a burst of uploads costs one segmentation per watch and
 * interval, and a change point is a record within about one interval of the write. A watch another
 * process is refreshing (its advisory lock held) stays due. The stale check runs with every round,
 * and a round runs at least once a minute (with no watch refreshed unless one is due).
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from '../../core/logger.ts';
import type { ChangesSegmenter } from '../changes/changes-segmenter.ts';
import { refreshWatch } from './records.ts';
import { checkStale } from './stale.ts';
import { WATCH_COLUMNS, type WatchRow } from './watches.ts';
import type { ServerConfig } from '../../config.ts';
import type { DisposalStack } from '../../core/disposal.ts';

const ROUND_AT_LEAST_MS = 60_000;

export class WatchScheduler {
  /** Every watch is due; else those of `#dueBenchmarks`; a round (the stale check) at least. */
  #due = false;
  #roundDue = false;
  readonly #dueBenchmarks = new Set<string>();
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<void> | null = null;
  #lastRun = 0;
  #closed = false;
  readonly #heartbeat: NodeJS.Timeout;
  /** Watches refreshed so far (tests). */
  refreshes = 0;

  constructor(
    private readonly orm: MikroORM,
    private readonly logger: Logger,
    private readonly intervalMs: number,
    private readonly segmenter?: ChangesSegmenter,
  ) {
    this.#heartbeat = setInterval(() => this.touch([]), ROUND_AT_LEAST_MS);
    this.#heartbeat.unref();
  }

  /** Results of these benchmarks (of any, when not given) were written: refresh their watches when the interval allows. */
  touch(benchmarks?: readonly string[]): void {
    if (benchmarks) for (const id of benchmarks) this.#dueBenchmarks.add(id);
    else this.#due = true;
    this.#roundDue = true;
    this.#arm();
  }

  /** Resolves once no round is due or running (tests). */
  async settled(): Promise<void> {
    while (this.#running || this.#timer) await (this.#running ?? new Promise((r) => setTimeout(r, 20)));
  }

  #arm(): void {
    if (this.#timer || this.#running || this.#closed || !this.#roundDue) return;
    const wait = Math.max(0, this.#lastRun + this.intervalMs - Date.now());
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#running = this.#round().finally(() => {
        this.#running = null;
        this.#arm();
      });
    }, wait);
    this.#timer.unref();
  }

  async #round(): Promise<void> {
    const all = this.#due;
    const benchmarks = [...this.#dueBenchmarks];
    this.#due = false;
    this.#roundDue = false;
    this.#dueBenchmarks.clear();
    this.#lastRun = Date.now();
    try {
      const em = this.orm.em.fork();
      const watches = await em.execute<WatchRow[]>(
        `select ${WATCH_COLUMNS} from watch w ${all ? '' : 'where w.benchmark_id = any(?::uuid[]) '}order by w.id`,
        all ? [] : [benchmarks],
      );
      for (const watch of watches) {
        if (this.#closed) return;
        try {
          this.refreshes++;
          if (!(await refreshWatch(this.orm.em.fork(), watch, this.segmenter))) this.#retry(watch.benchmark_id);
        } catch (err) {
          // A database hiccup: the next round tries again.
          this.#retry(watch.benchmark_id);
          this.logger.warn('watch not refreshed', { watch: watch.id, error: (err as Error).message });
        }
      }
      await checkStale(this.orm.em.fork());
    } catch (err) {
      if (all) this.#due = true;
      for (const id of benchmarks) this.#retry(id);
      this.#roundDue = true;
      this.logger.warn('watches not refreshed', { error: (err as Error).message });
    }
  }

  #retry(benchmark: string): void {
    this.#dueBenchmarks.add(benchmark);
    this.#roundDue = true;
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#heartbeat);
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    await this.#running;
  }
}

/** The alerts domain: watched series refreshed after writes, until the app stops. */
export function startAlerts(
  stack: DisposalStack,
  orm: MikroORM,
  logger: Logger,
  config: ServerConfig,
  segmenter: ChangesSegmenter,
): { watches: WatchScheduler } {
  const watches = new WatchScheduler(orm, logger, config.watchRefreshInterval * 1000, segmenter);
  return { watches: stack.use('watch refreshes', watches, (w) => w.close()) };
}
