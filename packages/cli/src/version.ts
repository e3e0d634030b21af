/** The CLI's version, shown by `benchmarks --version` and sent in the User-Agent. */
export const CLI_VERSION = '0.1.0';
