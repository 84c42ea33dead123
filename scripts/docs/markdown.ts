/**
 * What the documentation tests read from a Markdown file: its headings' anchors and its links, parsed as a
 * renderer parses them (code blocks and code spans hold no links), with GitHub's heading slugs.
 */
import { readFileSync } from 'node:fs';
import GithubSlugger from 'github-slugger';
import { fromMarkdown } from 'mdast-util-from-markdown';

interface MdNode {
  readonly type: string;
  readonly value?: string;
  readonly url?: string;
  readonly depth?: number;
  readonly children?: readonly MdNode[];
  readonly position?: { readonly start: { readonly line: number } };
}

interface MdLink {
  readonly url: string;
  readonly line: number;
}

export interface MdHeading {
  readonly depth: number;
  readonly text: string;
  readonly line: number;
  /** The heading's text and everything under it, up to the next heading of the same or a higher level. */
  readonly body: string;
}

export interface MdFile {
  readonly headings: readonly MdHeading[];
  /** GitHub's anchors: the slug of each heading, `-1`, `-2`, ... for repeats. */
  readonly anchors: ReadonlySet<string>;
  readonly links: readonly MdLink[];
}

/** The text a heading renders to (code spans included, markup dropped): what GitHub slugs. */
function textOf(node: MdNode): string {
  if (node.type === 'text' || node.type === 'inlineCode') return node.value ?? '';
  return (node.children ?? []).map(textOf).join('');
}

export function readMarkdown(path: string): MdFile {
  const source = readFileSync(path, 'utf8');
  const lines = source.split('\n');
  const tree = fromMarkdown(source) as MdNode;
  const headings: { depth: number; text: string; line: number }[] = [];
  const links: MdLink[] = [];
  const walk = (node: MdNode): void => {
    if (node.type === 'heading')
      headings.push({ depth: node.depth ?? 0, text: textOf(node), line: node.position?.start.line ?? 0 });
    // A `definition` is a reference-style link's target ([text][id] ... [id]: url).
    if ((node.type === 'link' || node.type === 'image' || node.type === 'definition') && node.url !== undefined) {
      links.push({ url: node.url, line: node.position?.start.line ?? 0 });
    }
    for (const child of node.children ?? []) walk(child);
  };
  walk(tree);
  const slugger = new GithubSlugger();
  const anchors = new Set(headings.map((h) => slugger.slug(h.text)));
  const withBodies = headings.map((h, i) => {
    const next = headings.slice(i + 1).find((n) => n.depth <= h.depth);
    return { ...h, body: lines.slice(h.line - 1, next ? next.line - 1 : lines.length).join('\n') };
  });
  return { headings: withBodies, anchors, links };
}
