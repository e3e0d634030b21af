/**
 * The SDK's version, sent in its `User-Agent` (kept equal to package.json by a test).
 * @example
 * console.log(`using @benchmarks/sdk ${SDK_VERSION}`);
 */
export const SDK_VERSION = '0.1.0';
