/** Back-testing, as `bre-batch compare` uses it: the comparison of two output folders and what it returns. */
export { runCompare, type CompareJson } from './compare.js';
export type { Estimate } from './design/estimators.js';
export type { CompareOptions } from './options.js';
export type { Product } from './side.js';
