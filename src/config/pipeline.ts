/**
 * Pipeline files (YAML or JSON, `pipelines/<name>.yaml` or any path) -> a validated, fully resolved
 * pipeline. Every message names the file, the place in it and what was expected. The format, by example, is
 * `pipelineFileSchema`'s; for users, docs/pipelines.md.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, extname, join, resolve } from 'node:path';
import { createHash } from 'node:crypto';
import YAML from 'yaml';
import { z } from 'zod';
import { BreError } from '@bre-batch/core/errors';
import { BILLING_OUTCOMES, parseAmount, type BillingOutcome } from '../limits/spend.js';
import { SERVICES, type ServiceName } from '@bre-batch/core/types';
import { getStageKind, stageKindNames } from '../stages/index.js';
import type { StageCondition, StageConfig } from '../stages/types.js';
import { PIPELINES_DIR } from './paths.js';
import { nearest } from './suggest.js';

export interface Pipeline {
  readonly name: string;
  readonly description: string;
  readonly key: string;
  readonly stages: readonly StageConfig[];
  /** Absolute path of the file it came from. */
  readonly path: string;
  /** sha256 of the file's text: a resumed run must use the same pipeline. */
  readonly sha256: string;
  /** `expect_version`: workflow name -> the strategy version its answers must carry (`run --expect-version`). */
  readonly expectVersion?: Readonly<Record<string, string>>;
  /** The file's `prices:` (amounts in micro-units); --price, --billed and --currency override them. */
  readonly prices?: PipelinePrices;
}

export interface PipelinePrices {
  readonly currency?: string;
  readonly service: Partial<Record<ServiceName, number>>;
  readonly workflow: Record<string, number>;
  readonly billed?: readonly BillingOutcome[];
}

const conditionSchema = z
  .object({
    stage: z.string().min(1),
    field: z.string().min(1),
    equals: z.unknown().optional(),
    not_equals: z.unknown().optional(),
    in: z.array(z.unknown()).optional(),
    not_in: z.array(z.unknown()).optional(),
    gte: z.number().optional(),
    lte: z.number().optional(),
    exists: z.boolean().optional(),
  })
  .strict();

const stageSchema = z
  .object({
    id: z.string().regex(/^[A-Za-z][A-Za-z0-9_-]*$/, 'an id of letters, digits, _ or - starting with a letter'),
    kind: z.string().min(1),
    endpoint: z
      .string()
      .regex(/^[A-Za-z0-9_-]+$/, 'a workflow endpoint name (letters, digits, _ or -)')
      .optional(),
    when: z.union([conditionSchema, z.array(conditionSchema)]).optional(),
    options: z.record(z.string(), z.unknown()).optional(),
    description: z.string().optional(),
  })
  .strict();

const amountSchema = z.union([z.number().nonnegative(), z.string().min(1)]);

const pricesSchema = z
  .object({
    currency: z
      .string()
      .regex(/^[A-Za-z]{1,8}$/, 'a currency code of letters (EUR, USD, INR)')
      .optional(),
    services: z
      .object(Object.fromEntries(SERVICES.map((svc) => [svc, amountSchema.optional()])))
      .strict()
      .optional(),
    workflows: z.record(z.string().regex(/^[A-Za-z0-9_-]+$/), amountSchema).optional(),
    billed: z.array(z.enum(BILLING_OUTCOMES)).optional(),
  })
  .strict();

/**
 * A pipeline file:
 *
 *   name: rescore                 # defaults to the file name
 *   description: ...
 *   key: reference_id             # the row key column (default reference_id)
 *   expect_version: { location: v1 }   # optional: stop at an answer of another version (run --expect-version)
 *   stages:
 *     - id: bureau                # unique; prefixes the stage's columns in results.csv
 *       kind: bureau_features     # a registered stage kind (bre-batch pipelines lists them)
 *     - id: decision
 *       kind: workflow
 *       endpoint: bureau_mobile_bank_bre
 *       when:                     # optional; all conditions must hold (see StageCondition)
 *         - { stage: bureau, field: is_risky_customer, equals: false }
 *       options: {}               # kind-specific, with defaults
 *   prices:                       # optional: what a call costs (docs/operations/spend.md)
 *     currency: EUR
 *     services: { bureau: 0.20, workflow: 0.05 }
 *     workflows: { bureau_mobile_bank_bre: 0.08 }
 *     billed: [2xx, 5xx, timeout] # the billing rule (default: src/limits/spend.ts DEFAULT_BILLED)
 */
export const pipelineFileSchema = z
  .object({
    $schema: z.string().optional(),
    name: z
      .string()
      .regex(/^[A-Za-z0-9_.-]+$/)
      .optional(),
    description: z.string().optional(),
    key: z.string().min(1).optional(),
    expect_version: z
      .record(
        z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'a workflow name (the <name> of workflow_<name>_<version>)'),
        z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'a version (the <version> of workflow_<name>_<version>)'),
      )
      .optional(),
    stages: z.array(stageSchema).min(1),
    prices: pricesSchema.optional(),
  })
  .strict();

/** The file's `prices:` in micro-units; a bad amount is the file's problem, named by its place. */
function pricesOf(
  file: string,
  p: z.infer<typeof pricesSchema> | undefined,
  problems: string[],
): PipelinePrices | undefined {
  if (!p) return undefined;
  const amount = (where: string, v: number | string): number => {
    try {
      return parseAmount(String(v), `${file}: ${where}`);
    } catch (err) {
      problems.push((err as Error).message);
      return 0;
    }
  };
  const service: Partial<Record<ServiceName, number>> = {};
  for (const svc of SERVICES) {
    const v = (p.services as Partial<Record<ServiceName, number | string>> | undefined)?.[svc];
    if (v !== undefined) service[svc] = amount(`prices.services.${svc}`, v);
  }
  const workflow: Record<string, number> = {};
  for (const [name, v] of Object.entries(p.workflows ?? {})) workflow[name] = amount(`prices.workflows.${name}`, v);
  return {
    ...(p.currency ? { currency: p.currency.toUpperCase() } : {}),
    service,
    workflow,
    ...(p.billed ? { billed: p.billed } : {}),
  };
}

function describeValue(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'an object';
  return `${typeof v} ${JSON.stringify(v)}`;
}

function at(path: readonly PropertyKey[]): string {
  return (
    path.reduce<string>((s, p) => (typeof p === 'number' ? `${s}[${p}]` : s ? `${s}.${String(p)}` : String(p)), '') ||
    '(top level)'
  );
}

function valueAt(doc: unknown, path: readonly PropertyKey[]): unknown {
  let v: any = doc;
  for (const p of path) v = v == null ? undefined : v[p as any];
  return v;
}

function zodMessages(file: string, doc: unknown, err: z.ZodError, prefix: PropertyKey[] = []): string[] {
  return err.issues.map((i) => {
    const path = [...prefix, ...i.path];
    const got = describeValue(valueAt(doc, path));
    let expected = i.message;
    if (i.code === 'unrecognized_keys')
      expected = `no key ${i.keys.map((k) => `'${k}'`).join(', ')} (not a known setting)`;
    else if (i.code === 'invalid_type') expected = `${i.expected}`;
    return `${file}: ${at(path)}: Expected ${expected}, got ${i.code === 'unrecognized_keys' ? 'it' : got}`;
  });
}

function resolvePipelinePath(nameOrPath: string): string {
  const looksLikePath =
    nameOrPath.includes('/') || nameOrPath.includes('\\') || ['.yaml', '.yml', '.json'].includes(extname(nameOrPath));
  if (looksLikePath) return resolve(nameOrPath);
  for (const ext of ['.yaml', '.yml', '.json']) {
    const p = join(PIPELINES_DIR, nameOrPath + ext);
    if (existsSync(p)) return p;
  }
  const names = listPipelineNames();
  const near = nearest(nameOrPath, names);
  throw new BreError(
    'PIPELINE_INVALID',
    `no pipeline named '${nameOrPath}'${near ? ` (did you mean '${near}'?)` : ''}: Expected one of ${names.join(', ')}, or a path to a pipeline file`,
  );
}

export function listPipelineNames(): string[] {
  try {
    return readdirSync(PIPELINES_DIR)
      .filter((f) => /\.(ya?ml|json)$/.test(f) && !f.endsWith('.schema.json'))
      .map((f) => f.replace(/\.(ya?ml|json)$/, ''))
      .sort();
  } catch {
    return [];
  }
}

export function loadPipeline(nameOrPath: string): Pipeline {
  const path = resolvePipelinePath(nameOrPath);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new BreError('PIPELINE_INVALID', `cannot read pipeline file ${path}: ${(err as Error).message}`);
  }
  return parsePipeline(text, path);
}

export function parsePipeline(text: string, path: string): Pipeline {
  const file = basename(path);
  let doc: unknown;
  try {
    doc = extname(path) === '.json' ? JSON.parse(text) : YAML.parse(text);
  } catch (err) {
    throw new BreError(
      'PIPELINE_INVALID',
      `${file}: not valid ${extname(path) === '.json' ? 'JSON' : 'YAML'}: ${(err as Error).message.split('\n')[0]}`,
    );
  }
  const parsed = pipelineFileSchema.safeParse(doc);
  if (!parsed.success) throw new BreError('PIPELINE_INVALID', zodMessages(file, doc, parsed.error).join('\n'));
  const problems: string[] = [];
  const ids = new Set<string>();
  const stages: StageConfig[] = [];
  parsed.data.stages.forEach((s, i) => {
    const where = `${file}: stages[${i}]`;
    if (ids.has(s.id)) problems.push(`${where}.id: Expected a unique stage id, got '${s.id}' a second time`);
    const kind = getStageKind(s.kind);
    if (!kind) {
      problems.push(`${where}.kind: Expected one of ${stageKindNames().join(', ')}, got '${s.kind}'`);
      ids.add(s.id);
      return;
    }
    const when = (s.when === undefined ? [] : Array.isArray(s.when) ? s.when : [s.when]) as StageCondition[];
    when.forEach((c, j) => {
      if (!ids.has(c.stage))
        problems.push(
          `${where}.when[${j}].stage: Expected the id of an earlier stage (${[...ids].join(', ') || 'none before this one'}), got '${c.stage}'`,
        );
    });
    ids.add(s.id);
    const opts = kind.optionsSchema.safeParse(s.options ?? {});
    if (!opts.success) {
      problems.push(...zodMessages(file, doc, opts.error, ['stages', i, 'options']));
      return;
    }
    const stage: StageConfig = {
      id: s.id,
      kind: s.kind,
      endpoint: s.endpoint,
      when,
      options: opts.data as Record<string, unknown>,
    };
    for (const m of kind.checkConfig?.(stage) ?? []) problems.push(`${where}: ${m}`);
    stages.push(stage);
  });
  const prices = pricesOf(file, parsed.data.prices, problems);
  if (problems.length > 0) throw new BreError('PIPELINE_INVALID', problems.join('\n'));
  return {
    name: parsed.data.name ?? basename(path, extname(path)),
    description: parsed.data.description ?? '',
    key: parsed.data.key ?? 'reference_id',
    stages,
    path,
    sha256: createHash('sha256').update(text).digest('hex'),
    ...(parsed.data.expect_version ? { expectVersion: parsed.data.expect_version } : {}),
    ...(prices ? { prices } : {}),
  };
}
