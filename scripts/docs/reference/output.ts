/**
 * docs/reference/output-files.md: the files of an output folder (packages/formats/src/files.ts) and the fields of
 * its JSON files, from the schemas their readers check them with (packages/formats/src/), written out by zod's
 * JSON Schema export: a field's name, its type, and whether every folder has it.
 */
import { z } from 'zod';
import {
  errorLineSchema,
  FILES,
  manifestSchema,
  resultLineSchema,
  runSummarySchema,
  TRANSACTION_COLUMNS,
} from '@bre-batch/formats';
import { code, table } from './markdown.js';

interface JsonSchema {
  readonly type?: string | readonly string[];
  readonly properties?: Readonly<Record<string, JsonSchema>>;
  readonly required?: readonly string[];
  readonly items?: JsonSchema;
  readonly anyOf?: readonly JsonSchema[];
  readonly additionalProperties?: JsonSchema | boolean;
  readonly enum?: readonly unknown[];
}

function typeName(s: JsonSchema): string {
  if (s.anyOf) return [...new Set(s.anyOf.map(typeName))].join(' or ');
  if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join(' or ');
  const t = [s.type ?? 'any'].flat();
  return t
    .map((x) =>
      x === 'array'
        ? `array of ${s.items ? typeName(s.items) : 'any'}`
        : x === 'object' && !s.properties && s.additionalProperties
          ? 'map'
          : x,
    )
    .join(' or ');
}

/** The fields of an object schema as dotted paths, nested objects opened up to `depth` levels. */
function fields(s: JsonSchema, depth: number, prefix = ''): string[][] {
  const obj = s.anyOf?.find((x) => x.properties) ?? s;
  const out: string[][] = [];
  for (const [name, sub] of Object.entries(obj.properties ?? {})) {
    const path = `${prefix}${name}`;
    const always = (obj.required ?? []).includes(name) ? 'yes' : 'no';
    out.push([code(path), typeName(sub), always]);
    const inner = sub.anyOf?.find((x) => x.properties) ?? sub;
    if (depth > 1 && inner.properties) out.push(...fields(inner, depth - 1, `${path}.`));
  }
  return out;
}

const schema = (zs: z.ZodType): JsonSchema =>
  z.toJSONSchema(zs, { unrepresentable: 'any', io: 'input' }) as unknown as JsonSchema;

export function outputFilesPage(): string[] {
  const sections: [string, string, z.ZodType, number][] = [
    [FILES.results, 'one line per row that succeeded', resultLineSchema, 1],
    [FILES.errors, 'one line per row that failed', errorLineSchema, 2],
    [FILES.manifest, 'what the folder belongs to, and the record of its sessions', manifestSchema, 2],
    [FILES.summary, "the run's counts, rates and times", runSummarySchema, 1],
  ];
  return [
    '# Output files',
    '',
    'The files of an output folder and the fields of its JSON files, from the schemas the program reads them with',
    '(`packages/formats/src/`). What each file is for, and how to read the folder: [Output](../output.md).',
    '',
    ...table(
      ['file', 'name'],
      Object.entries(FILES).map(([k, v]) => [code(v), k]),
    ),
    '',
    `\`${FILES.transactions}\` and \`${FILES.transactionsParquet}\` have the columns ${TRANSACTION_COLUMNS.map(code).join(', ')}.`,
    ...sections.flatMap(([file, what, zs, depth]) => [
      '',
      `## ${file}`,
      '',
      `${what[0].toUpperCase()}${what.slice(1)}.`,
      '',
      ...table(['field', 'type', 'always there'], fields(schema(zs), depth)),
    ]),
  ];
}
