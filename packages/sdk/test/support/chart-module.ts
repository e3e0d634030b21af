/** What chart.test.ts calls in its bounded child process: the chart, and where its axis puts values. */
import { valueAxis, type DrawnGroup } from '../../src/axis.ts';

export { renderCompareSvg, ticks } from '../../src/chart.ts';

/** Where `valueAxis(groups, margin)` puts its ticks and `values` on the axis, and draws `values`: from 0 to 1 (functions cannot be sent). */
export function positions(groups: DrawnGroup[], margin: number, values: number[]): { ticks: number[]; at: number[]; drawn: number[] } {
  const axis = valueAxis(groups, margin);
  return { ticks: axis.ticks.values.map(axis.at), at: values.map(axis.at), drawn: values.map(axis.drawn) };
}
