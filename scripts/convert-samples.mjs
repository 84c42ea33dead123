#!/usr/bin/env node
/**
 * Converts every shipped pipeline's sample (samples/<pipeline>.csv or .ndjson) to Parquet and to gzip, the
 * way warehouses hand such files over, into OUT_DIR (with copies of the samples' reports/ and bank/ folders,
 * which the samples' *_path columns name relatively: copies, not links, since a file column may not lead
 * outside the input's folder through a symbolic link, src/input/files-root.ts):
 *
 *   node scripts/convert-samples.mjs OUT_DIR
 *
 * Parquet is written by hyparquet-writer (SNAPPY), 4 rows a row group so that even a sample spans several.
 * Columns are typed as a warehouse types them: a CSV column whose every value is a number that reads back
 * as written becomes DOUBLE, any other STRING (so `00123` stays text); NDJSON values keep their JSON
 * types, an object becomes a struct (its object or array fields JSON), an array JSON.
 * The tests run each shipped pipeline on these and compare with the CSV/NDJSON run (test/e2e).
 */
import { cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import { parquetWriteFile } from 'hyparquet-writer';

const ROOT = resolve(import.meta.dirname, '..');
export const SAMPLES = join(ROOT, 'samples');

/** The rows of a sample as objects (CSV: text values, '' as null; NDJSON: JSON values). */
function sampleRows(path) {
  const text = readFileSync(path, 'utf8');
  if (path.endsWith('.csv')) {
    const rows = parse(text, { columns: true, skip_empty_lines: true });
    return rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v === '' ? null : v])));
  }
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l));
}

const isObject = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);
const numeric = (v) => typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v) && String(Number(v)) === v;

/** The Parquet type of a column's values: DOUBLE, BOOLEAN, STRING, JSON, or { struct: children }. */
function typeOf(values, csv, depth = 0) {
  const present = values.filter((v) => v !== null && v !== undefined);
  if (present.length === 0) return 'STRING';
  if (csv) return present.every(numeric) ? 'DOUBLE' : 'STRING';
  if (present.every((v) => typeof v === 'number')) return 'DOUBLE';
  if (present.every((v) => typeof v === 'boolean')) return 'BOOLEAN';
  if (present.every((v) => typeof v === 'string')) return 'STRING';
  if (depth === 0 && present.every(isObject)) {
    const keys = [...new Set(present.flatMap((o) => Object.keys(o)))];
    return {
      struct: keys.map((k) => [
        k,
        typeOf(
          present.map((o) => o[k]),
          false,
          1,
        ),
      ]),
    };
  }
  return 'JSON';
}

function element(name, type) {
  if (typeof type === 'object')
    return [
      { name, repetition_type: 'OPTIONAL', num_children: type.struct.length },
      ...type.struct.flatMap(([k, t]) => element(k, t)),
    ];
  const base = { name, repetition_type: 'OPTIONAL' };
  if (type === 'DOUBLE') return [{ ...base, type: 'DOUBLE' }];
  if (type === 'BOOLEAN') return [{ ...base, type: 'BOOLEAN' }];
  if (type === 'JSON') return [{ ...base, type: 'BYTE_ARRAY', converted_type: 'JSON' }];
  return [{ ...base, type: 'BYTE_ARRAY', converted_type: 'UTF8' }];
}

function value(v, type, csv) {
  if (v === null || v === undefined) return null;
  if (typeof type === 'object') return Object.fromEntries(type.struct.map(([k, t]) => [k, value(v[k], t, false)]));
  if (type === 'DOUBLE' && csv) return Number(v);
  return v;
}

/** Writes `rows` (objects) as a Parquet file with a schema inferred as above. */
export function writeParquetRows(path, rows, { csv = false, rowGroupSize = 4 } = {}) {
  const names = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const types = names.map((n) =>
    typeOf(
      rows.map((r) => r[n]),
      csv,
    ),
  );
  const schema = [{ name: 'root', num_children: names.length }, ...names.flatMap((n, i) => element(n, types[i]))];
  const columnData = names.map((n, i) => ({ name: n, data: rows.map((r) => value(r[n], types[i], csv)) }));
  parquetWriteFile({ filename: path, columnData, schema, rowGroupSize });
}

/** One sample -> OUT_DIR/<name>.parquet and OUT_DIR/<name>.<ext>.gz; returns their paths. */
export function convertSample(samplePath, outDir) {
  const name = samplePath.replace(/^.*\//, '').replace(/\.(csv|ndjson)$/, '');
  const csv = samplePath.endsWith('.csv');
  const parquet = join(outDir, `${name}.parquet`);
  writeParquetRows(parquet, sampleRows(samplePath), { csv });
  const gz = join(outDir, `${name}.${csv ? 'csv' : 'ndjson'}.gz`);
  writeFileSync(gz, gzipSync(readFileSync(samplePath)));
  return { parquet, gz };
}

/** Every pipeline's sample converted into `outDir`: pipeline name -> { sample, parquet, gz }. */
export function convertSamples(outDir) {
  mkdirSync(outDir, { recursive: true });
  for (const folder of ['reports', 'bank']) {
    cpSync(join(SAMPLES, folder), join(outDir, folder), { recursive: true });
  }
  const out = {};
  for (const file of readdirSync(SAMPLES)) {
    // A dotfile is no sample: the benchmark writes its rescore inputs beside the samples as .bench-*.csv.
    if (file.startsWith('.') || !/\.(csv|ndjson)$/.test(file)) continue;
    const sample = join(SAMPLES, file);
    out[file.replace(/\.(csv|ndjson)$/, '')] = { sample, ...convertSample(sample, outDir) };
  }
  return out;
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const outDir = process.argv[2];
  if (!outDir) {
    process.stderr.write('usage: node scripts/convert-samples.mjs OUT_DIR\n');
    process.exit(2);
  }
  for (const [name, files] of Object.entries(convertSamples(resolve(outDir))))
    process.stdout.write(`${name}: ${files.parquet} ${files.gz}\n`);
}
