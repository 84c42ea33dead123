/** The rows of locationCsv (./output.ts) as a Parquet file, for the e2e tests of Parquet input. */
import { join } from 'node:path';
import { writeParquetRows } from '../../scripts/convert-samples.mjs';
import { locationKey } from './output.js';

/** `n` location rows (latitude and longitude typed DOUBLE), 40 rows a row group; returns the file's path. */
export function locationParquet(dir: string, n: number, name = 'input.parquet'): string {
  const rows = Array.from({ length: n }, (_, i) => {
    const id = String(i + 1).padStart(6, '0');
    return {
      reference_id: locationKey(i + 1),
      user_id: `user${id}`,
      lead_id: `lead${id}`,
      latitude: Number((10 + (((i + 1) * 7919) % 2000) / 100).toFixed(4)),
      longitude: Number((72 + (((i + 1) * 104729) % 1600) / 100).toFixed(4)),
    };
  });
  const path = join(dir, name);
  writeParquetRows(path, rows, { rowGroupSize: 40 });
  return path;
}
