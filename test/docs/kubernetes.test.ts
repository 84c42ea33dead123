/**
 * The guide's Kubernetes manifests are the ones users copy (issue 33): every YAML block of the README and of
 * the pages under docs/ that is a Kubernetes object is validated offline against the Kubernetes API's OpenAPI schema (the classes of
 * npm `kubernetes-models` validate against it), with no field the API does not know (their TypeScript types), and each container runs the image's CLI the way signals
 * reach it (`exec node /app/bin/bre-batch.js`, no npx) with options the command really has.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { CronJob } from 'kubernetes-models/batch/v1/CronJob';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { loadAllCommands } from '../../src/cli/commands.js';
import yargs from 'yargs';

const commands = await loadAllCommands();
const ROOT = join(import.meta.dirname, '..', '..');
/** The README and every page of the guide (docs/, decision records aside), each by its path from the root. */
const PAGES = [
  join(ROOT, 'README.md'),
  ...readdirSync(join(ROOT, 'docs'), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.md') && !e.parentPath.includes('decisions'))
    .map((e) => join(e.parentPath, e.name))
    .sort(),
].map((path) => ({ name: relative(ROOT, path), text: readFileSync(path, 'utf8') }));

const TYPES: Record<string, { module: string; type: string }> = {
  'batch/v1/CronJob': { module: 'kubernetes-models/batch/v1/CronJob', type: 'ICronJob' },
  'batch/v1/Job': { module: 'kubernetes-models/batch/v1/Job', type: 'IJob' },
};

/**
 * The schema allows fields it does not know (as the API server does without strict field validation), so a
 * misspelt field (`volumeMount`) would pass `validate()`. The models' TypeScript types close that gap: each
 * manifest written as an object literal that `satisfies` its type, which refuses unknown properties. Returns
 * tsc's errors (empty when every manifest is right).
 */
async function unknownFields(docs: readonly Manifest['doc'][], name: string): Promise<string> {
  const dir = join(ROOT, 'test', 'artifacts');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}-${process.pid}.ts`);
  const lines = docs.map((d, i) => {
    const t = TYPES[`${d.apiVersion}/${d.kind}`];
    if (!t) throw new Error(`no type for ${d.apiVersion}/${d.kind} in this test`);
    return `import type { ${t.type} as T${i} } from '${t.module}';\nexport const m${i} = ${JSON.stringify(d)} satisfies T${i};`;
  });
  writeFileSync(file, `${lines.join('\n')}\n`);
  const tsc = join(ROOT, 'node_modules', '.bin', 'tsc');
  const args = [
    '--ignoreConfig',
    '--noEmit',
    '--strict',
    '--module',
    'nodenext',
    '--moduleResolution',
    'nodenext',
    '--target',
    'es2022',
    '--skipLibCheck',
    file,
  ];
  try {
    await promisify(execFile)(tsc, args, { cwd: ROOT });
    return '';
  } catch (err) {
    return String((err as { stdout?: string }).stdout ?? err);
  } finally {
    rmSync(file, { force: true });
  }
}

interface Manifest {
  /** `docs/page.md line N`: where the block starts. */
  readonly line: string;
  readonly doc: { apiVersion?: string; kind?: string; [k: string]: unknown };
}

/** Every Kubernetes object (a YAML document with apiVersion and kind) in a page's ```yaml blocks. */
function manifests(name: string, markdown: string): Manifest[] {
  const out: Manifest[] = [];
  for (const m of markdown.matchAll(/^```ya?ml\n([\s\S]*?)^```$/gm)) {
    const line = `${name} line ${markdown.slice(0, m.index).split('\n').length + 1}`;
    for (const d of parseAllDocuments(m[1])) {
      if (d.errors.length > 0) throw new Error(`${line}: ${d.errors[0].message}`);
      const doc = d.toJS() as Manifest['doc'];
      if (doc && typeof doc === 'object' && doc.apiVersion && doc.kind) out.push({ line, doc });
    }
  }
  return out;
}

const model = (doc: Manifest['doc']): { validate(): void } => {
  const key = `${doc.apiVersion}/${doc.kind}`;
  if (key === 'batch/v1/CronJob') return new CronJob(doc as never);
  if (key === 'batch/v1/Job') return new Job(doc as never);
  throw new Error(`no model for ${key} in this test: add its class from kubernetes-models`);
};

/** The option names a command's builder declares, as yargs holds them (as reference.test.ts reads them). */
function optionNames(cmd: { builder?: unknown }): Set<string> {
  const y = yargs([]);
  if (typeof cmd.builder === 'function') (cmd.builder as (y: unknown) => unknown)(y);
  else if (cmd.builder) y.options(cmd.builder as never);
  return new Set(Object.keys((y as unknown as { getOptions(): { key: Record<string, unknown> } }).getOptions().key));
}

interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
}
/** The pod's spec of a CronJob's or a Job's template. */
function podSpecOf(doc: Manifest['doc']): any {
  return doc.kind === 'CronJob' ? (doc as any).spec.jobTemplate.spec.template.spec : (doc as any).spec.template.spec;
}

function containersOf(doc: Manifest['doc']): Container[] {
  return podSpecOf(doc).containers as Container[];
}

/** The bre-batch command lines a container's shell script runs with exec: [command, ...options]. */
function cliRuns(c: Container): { command: string; options: string[]; script: string }[] {
  const script = [...(c.command ?? []), ...(c.args ?? [])].join(' ');
  return [...script.matchAll(/exec node \/app\/bin\/bre-batch\.js (\w+)([^&|;]*)/g)].map((m) => ({
    command: m[1],
    options: [...m[2].matchAll(/(?:^|\s)--([a-z0-9-]+)/g)].map((o) => o[1]),
    script,
  }));
}

describe("the guide's Kubernetes manifests", () => {
  const found = PAGES.flatMap((p) => manifests(p.name, p.text));
  const cronJob = () => found.find((f) => f.doc.kind === 'CronJob')!;

  it("are there: the Job of a job's workers (run --job), the CronJob of the shards and the one that merges", () => {
    expect(found.map((f) => `${f.doc.kind} ${(f.doc.metadata as { name: string }).name}`).sort()).toEqual([
      'CronJob bre-batch-rescore',
      'CronJob bre-batch-rescore-merge',
      'Job bre-batch-rescore-20261126',
    ]);
  });

  it('each is valid against the Kubernetes API schema', () => {
    for (const f of found) {
      expect(() => model(f.doc).validate(), f.line).not.toThrow();
    }
  });

  it('have no field the Kubernetes API does not know (a misspelt field is refused)', async () => {
    expect(
      await unknownFields(
        found.map((f) => f.doc),
        'k8s-readme',
      ),
    ).toBe('');
    const typo = structuredClone(cronJob().doc) as any;
    const c = typo.spec.jobTemplate.spec.template.spec.containers[0];
    c.volumeMount = c.volumeMounts;
    delete c.volumeMounts;
    expect(await unknownFields([typo], 'k8s-typo')).toMatch(/'"volumeMount"' does not exist in type 'IContainer'/);
  }, 180_000);

  it('the validation used here refuses what is wrong (a string for a count, a container without a name, an unknown policy)', () => {
    const doc = structuredClone(cronJob().doc) as any;
    doc.spec.jobTemplate.spec.backoffLimit = 'eight';
    expect(() => model(doc).validate()).toThrow(/backoffLimit must be integer/);
    const unnamed = structuredClone(cronJob().doc) as any;
    unnamed.spec.jobTemplate.spec.template.spec.containers[0].name = undefined;
    expect(() => model(unnamed).validate()).toThrow(/name/);
    const policy = structuredClone(cronJob().doc) as any;
    policy.spec.concurrencyPolicy = 'Never';
    expect(() => model(policy).validate()).toThrow(/concurrencyPolicy must be equal to one of the allowed values/);
  });

  it('every container runs the image built from the Dockerfile, node by exec (SIGTERM reaches it), as a non-root user', () => {
    for (const f of found) {
      const spec = podSpecOf(f.doc);
      expect(spec.securityContext.runAsNonRoot, f.line).toBe(true);
      for (const c of containersOf(f.doc)) {
        expect(c.image).toBe('registry.example.com/bre-batch:1');
        const script = [...(c.command ?? []), ...(c.args ?? [])].join(' ');
        expect(script).not.toMatch(/\bnpx\b|\bnpm\b/);
        expect(cliRuns(c).length, script).toBeGreaterThan(0);
        // Nothing runs after the CLI in the script: exec hands the shell's PID (1) to node.
        expect(script.trimEnd()).toMatch(/exec node \/app\/bin\/bre-batch\.js [^&|;]*$/);
      }
    }
    // Longer than the CLI's default --stop-grace (10 s), so the calls in flight finish before SIGKILL.
    for (const f of found.filter(
      (x) => x.doc.kind === 'Job' || (x.doc.metadata as { name: string }).name === 'bre-batch-rescore',
    )) {
      expect(podSpecOf(f.doc).terminationGracePeriodSeconds, f.line).toBeGreaterThan(10);
    }
  });

  it('the command lines use only options their command has', () => {
    for (const f of found) {
      for (const c of containersOf(f.doc)) {
        for (const run of cliRuns(c)) {
          const cmd = commands.find((x) => String((x as { command?: unknown }).command).split(' ')[0] === run.command);
          expect(cmd, run.script).toBeDefined();
          const known = optionNames(cmd as { builder?: unknown });
          expect(run.options.filter((o) => !known.has(o) && !known.has(o.replace(/^no-/, '')))).toEqual([]);
        }
      }
    }
  });
});
