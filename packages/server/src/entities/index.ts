import { User } from './user.ts';
import { Benchmark, Flavor, Site, Tag } from './catalogue.ts';
import { Claim, Result, ResultTag } from './results.ts';

export * from './user.ts';
export * from './catalogue.ts';
export * from './results.ts';

export const entities = [User, Benchmark, Site, Flavor, Tag, Result, ResultTag, Claim];
