/**
 * What a row costs on the raw path, by part: the runner's CPU profiles (`node --cpu-prof`, every thread) of
 * one `run location --rate off` against the sandbox, each sample given to the part owning the deepest frame
 * of the stack that is the program's own code or a library's (a builtin such as JSON.parse counts for its
 * caller), the bundle's frames mapped to their sources by its source maps. Garbage collection, V8's own
 * work and Node's internals under no such frame have parts of their own; idle time is left out. Divided by
 * the rows: CPU microseconds a row, by part and by thread. Beside it, the same for the bare transport loop
 * (./undici-loop.ts, the least a client can do per request with undici): the difference is what the runner
 * adds. Profiling slows both by a few percent; the shares are what the figure is for.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PACKAGE_ROOT } from '../src/config/paths.js';
import { benchScriptArgs, CLI } from './harness.js';

/** The parts, each with the source paths (relative to the package) it owns, first match wins. */
const PARTS: readonly (readonly [string, RegExp])[] = [
  [
    'start-up, options and end (not per row)',
    /^src\/(cli|config|app|page|report|errors)|^src\/output\/journal\/compact\.ts|^src\/pipeline\/(finish|run-open|build-summary)\.ts|^packages\/formats\/src\/(page|manifest|summary|json-file|frontier|files|tables)|^packages\/core\/|node_modules\/(yargs|zod|yaml|hyparquet)/,
  ],
  [
    'input (reading and validating rows)',
    /^src\/input\/|^packages\/formats\/src\/input\/|node_modules\/(csv-parse|iconv-lite)\/|^src\/pipeline\/input\.ts/,
  ],
  ['request building (stage, body)', /^src\/services\/|^src\/stages\//],
  ['response parsing (the bare loop: its JSON.parse)', /^src\/http\/classify\.ts|^bench\/undici-loop\.ts/],
  [
    'undici and sockets',
    /node_modules\/undici\/|^src\/http\/transport\.ts|^node:(net|internal\/(net|stream_base_commons|streams|dns))/,
  ],
  ['normalising', /^src\/normalise\//],
  [
    'journal (the result line, its write)',
    /^src\/output\/(journal|ndjson-file|run-output|redact|modes|audit)|^packages\/formats\/src\/(ndjson-file|journal-file|journal)\.ts|^src\/pipeline\/recorder\.ts|^src\/output\/files\//,
  ],
  ["spool (the run thread's side)", /^src\/output\/spool\//],
  [
    // Since 2026-11-29 the count per attempt is in measure's frame (src/http/layers/measure.ts): the call chain's.
    'spend (prices: the meter, its file)',
    /^src\/(limits\/spend|output\/spend-file|pipeline\/(spend|job-spend))\.ts/,
  ],
  ['limiter', /^src\/limits\/|^src\/http\/layers\/limit\.ts|node_modules\/bottleneck\//],
  ['call chain (layers, retry, deadlines)', /^src\/http\/|^src\/retry\//],
  [
    'progress, metrics, monitor',
    /^src\/pipeline\/(progress|monitor)\.ts|^src\/metrics\/|node_modules\/(cli-progress|prom-client)\//,
  ],
  ['run loop (feed, window, rows, stop)', /^src\/pipeline\//],
  ['logging', /^src\/log\/|node_modules\/pino/],
];
const GC = 'garbage collection';
const PROGRAM = '(program): V8 and native work under no frame';
const NODE = "Node's internals (promises, timers, streams) under no part";
const OTHER = 'other code';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Source paths of the bundle's frames, by its source maps (relative to the package at `root`). */
class Sources {
  readonly #maps = new Map<string, SourceMap | null>();

  constructor(readonly root: string = PACKAGE_ROOT) {}

  path(url: string, line: number, column: number): string {
    if (!url.startsWith('file://')) return url;
    const file = fileURLToPath(url);
    if (!this.#maps.has(file)) {
      let map: SourceMap | null = null;
      try {
        map = new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8')));
      } catch {
        /* not bundled: the file is its own source */
      }
      this.#maps.set(file, map);
    }
    const map = this.#maps.get(file);
    const entry = map?.findEntry(line, column) as { originalSource?: string } | undefined;
    const source = entry?.originalSource ? entry.originalSource : url;
    const path = source.startsWith('file://') ? fileURLToPath(source) : join(file, '..', source);
    return relative(this.root, path).replace(/^(\.\.\/)+/, '');
  }
}

const partOf = (path: string): string | undefined => PARTS.find(([, re]) => re.test(path))?.[0];

/** Microseconds of CPU by part in one thread's profile (idle left out). */
function attribute(p: Profile, sources: Sources): Map<string, number> {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const memo = new Map<number, string | null>();
  const owner = (id: number): string => {
    const n = byId.get(id)!;
    const name = n.callFrame.functionName;
    if (name === '(idle)') return '(idle)';
    if (name === '(garbage collector)') return GC;
    if (name === '(program)') return PROGRAM;
    let node: ProfileNode | undefined = n;
    let sawNode = false;
    while (node) {
      const cached = memo.get(node.id);
      if (cached !== undefined) return cached ?? (sawNode ? NODE : OTHER);
      const { url, lineNumber, columnNumber } = node.callFrame;
      if (url) {
        const part = partOf(sources.path(url, lineNumber, columnNumber));
        if (part) {
          memo.set(n.id, part);
          return part;
        }
        if (url.startsWith('node:')) sawNode = true;
      }
      const up = parent.get(node.id);
      node = up === undefined ? undefined : byId.get(up);
    }
    return sawNode ? NODE : OTHER;
  };
  const us = new Map<string, number>();
  p.samples.forEach((id, i) => {
    const part = owner(id);
    if (part !== '(idle)') us.set(part, (us.get(part) ?? 0) + (p.timeDeltas[i] ?? 0));
  });
  return us;
}

/** Each thread's profile in `dir`: which thread (by the scripts its frames run), and its CPU by part. */
function readProfiles(dir: string, root?: string): { thread: string; us: Map<string, number> }[] {
  const sources = new Sources(root);
  return readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => {
      const text = readFileSync(join(dir, f), 'utf8');
      const thread = text.includes('spool-worker') ? 'spool' : text.includes('rebuild-worker') ? 'rebuild' : 'main';
      return { thread, us: attribute(JSON.parse(text) as Profile, sources) };
    });
}

async function profiled(args: readonly string[], env: Record<string, string>, dir: string): Promise<number | null> {
  const child = spawn(process.execPath, ['--cpu-prof', '--cpu-prof-dir', dir, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  return code;
}

export interface RowCost {
  /** CPU microseconds a row by part, on the run's thread. */
  readonly main: Record<string, number>;
  /** ... on the spool's thread (all of it per row: it follows the journal). */
  readonly spool: number;
  readonly mainTotal: number;
  /** CPU microseconds a request of the bare transport loop (every part of it). */
  readonly bareTransport: number;
  readonly bareTransportParts: Record<string, number>;
  /** The same run of another build (RowCost.against's checkout), its run's thread by part and its spool's. */
  readonly against?: {
    readonly root: string;
    readonly main: Record<string, number>;
    readonly mainTotal: number;
    readonly spool: number;
  };
  readonly method: string;
}

const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);

const perRow = (us: Map<string, number>, rows: number) =>
  Object.fromEntries(
    [...us].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, Math.round((v / rows) * 10) / 10] as const),
  );

/** The runner over `input` (`rows` rows) and the bare transport loop, each profiled once. */
export async function rowCost(o: {
  readonly dir: string;
  readonly input: string;
  readonly rows: number;
  readonly env: Record<string, string>;
  readonly url: string;
  readonly path: string;
  readonly clientId: string;
  readonly token: string;
  readonly body: string;
  /** Another checkout, built: its runner profiled the same way, after this one's. */
  readonly against?: string;
  /** More options for this build's run (BENCH_RAW_ARGS, e.g. a price), as its rounds had them. */
  readonly extra?: readonly string[];
}): Promise<RowCost> {
  const runDir = join(o.dir, 'profile-run');
  const bareDir = join(o.dir, 'profile-bare');
  for (const d of [runDir, bareDir]) {
    rmSync(d, { recursive: true, force: true });
    mkdirSync(d, { recursive: true });
  }
  const runner = async (cli: string, dir: string, root?: string, extra: readonly string[] = []) => {
    const out = join(o.dir, 'profile-out');
    rmSync(out, { recursive: true, force: true });
    const args = ['run', 'location', '--input', o.input, '--out', out, '--rate', 'off', '--concurrency', '64'];
    const code = await profiled([cli, ...args, '--no-progress', ...extra], o.env, dir);
    if (code !== 0) throw new Error(`the profiled run exited ${code}`);
    const main = new Map<string, number>();
    let spool = 0;
    for (const t of readProfiles(dir, root))
      if (t.thread === 'main') for (const [k, v] of t.us) main.set(k, (main.get(k) ?? 0) + v);
      else if (t.thread === 'spool') for (const v of t.us.values()) spool += v;
    return { main, spool };
  };
  const { main, spool } = await runner(CLI, runDir, undefined, o.extra);
  let against: RowCost['against'];
  if (o.against) {
    const dir = join(o.dir, 'profile-against');
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const theirs = await runner(join(o.against, 'bin', 'bre-batch.js'), dir, o.against);
    against = {
      root: o.against,
      main: perRow(theirs.main, o.rows),
      mainTotal: Math.round((total(theirs.main) / o.rows) * 10) / 10,
      spool: Math.round((theirs.spool / o.rows) * 10) / 10,
    };
  }
  const bareArgs = benchScriptArgs('undici-loop.ts', [
    'transport',
    o.url,
    o.path,
    o.clientId,
    o.token,
    o.body,
    String(o.rows),
  ]);
  await profiled(bareArgs, {}, bareDir);
  const bare = new Map<string, number>();
  for (const t of readProfiles(bareDir)) for (const [k, v] of t.us) bare.set(k, (bare.get(k) ?? 0) + v);
  return {
    main: perRow(main, o.rows),
    spool: Math.round((spool / o.rows) * 10) / 10,
    mainTotal: Math.round((total(main) / o.rows) * 10) / 10,
    bareTransport: Math.round((total(bare) / o.rows) * 10) / 10,
    bareTransportParts: perRow(bare, o.rows),
    ...(against ? { against } : {}),
    method:
      "node --cpu-prof of the whole command (every thread); each sample to the part owning the deepest frame of the program's or a library's code (source maps of the bundle), builtins to their caller; idle left out; divided by the rows. Start-up and the end are in their own part.",
  };
}

/** The breakdown as a table (CPU microseconds a row; the bare loop's request beside). */
export function rowCostTable(c: RowCost): string {
  const lines = [
    `what a row costs on the raw path, CPU us a row (${c.method})`,
    `| part | runner, run's thread | bare transport loop |${c.against ? ` ${c.against.root}'s runner |` : ''}`,
    `|---|---|---|${c.against ? '---|' : ''}`,
    ...[...new Set([...Object.keys(c.main), ...Object.keys(c.bareTransportParts)])].map(
      (k) =>
        `| ${k} | ${c.main[k] ?? '-'} | ${c.bareTransportParts[k] ?? '-'} |${c.against ? ` ${c.against.main[k] ?? '-'} |` : ''}`,
    ),
    `| total, run's thread | ${c.mainTotal} | ${c.bareTransport} |${c.against ? ` ${c.against.mainTotal} |` : ''}`,
    `| the spool's thread | ${c.spool} | - |${c.against ? ` ${c.against.spool} |` : ''}`,
  ];
  return `${lines.join('\n')}\n`;
}
