/**
 * @stdlib's distributions and special functions, loaded when first called: about 400 small CommonJS
 * modules (a tenth of a second of a start) that a process which never compares need not read.
 */
import { createRequire } from 'node:module';

// Named `require`, so that the check of what dist/ loads (test/support/imports.ts) sees these calls.
const require = createRequire(import.meta.url);

interface Distributions {
  gammaln: typeof import('@stdlib/math-base-special-gammaln');
  normalCdf: typeof import('@stdlib/stats-base-dists-normal-cdf');
  normalQuantile: typeof import('@stdlib/stats-base-dists-normal-quantile');
  tCdf: typeof import('@stdlib/stats-base-dists-t-cdf');
  tQuantile: typeof import('@stdlib/stats-base-dists-t-quantile');
}

let loaded: Distributions | undefined;

export function distributions(): Distributions {
  loaded ??= {
    gammaln: require('@stdlib/math-base-special-gammaln'),
    normalCdf: require('@stdlib/stats-base-dists-normal-cdf'),
    normalQuantile: require('@stdlib/stats-base-dists-normal-quantile'),
    tCdf: require('@stdlib/stats-base-dists-t-cdf'),
    tQuantile: require('@stdlib/stats-base-dists-t-quantile'),
  };
  return loaded;
}
