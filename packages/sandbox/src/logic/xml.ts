/**
 * A light XML reader for bureau_b_xml reports (decision spec 2.7). It turns elements into plain objects:
 * children by tag name (repeated tags become arrays), text-only elements into strings, attributes ignored
 * except when an element has nothing else. Enough for report data; not a validating parser.
 */
export class XmlError extends Error {}

type Node = { [tag: string]: unknown };

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decodeEntities(s: string): string {
  if (!s.includes('&')) return s;
  return s.replace(/&(#x[0-9a-fA-F]+|#\d+|[a-zA-Z]+);/g, (m, e: string) => {
    if (e[0] === '#') return String.fromCodePoint(e[1] === 'x' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10));
    return ENTITIES[e] ?? m;
  });
}

/** Strips an XML namespace prefix: `soapenv:Envelope` -> `Envelope`. */
function localName(tag: string): string {
  const i = tag.indexOf(':');
  return i < 0 ? tag : tag.slice(i + 1);
}

export function parseXml(text: string): Node {
  let i = 0;
  const n = text.length;
  const stack: { tag: string; node: Node; text: string; hasChild: boolean }[] = [];
  let root: Node | undefined;

  const add = (parent: Node, tag: string, value: unknown) => {
    const prev = parent[tag];
    if (prev === undefined) parent[tag] = value;
    else if (Array.isArray(prev)) prev.push(value);
    else parent[tag] = [prev, value];
  };

  while (i < n) {
    const lt = text.indexOf('<', i);
    if (lt < 0) {
      if (text.slice(i).trim() !== '' && stack.length === 0)
        throw new XmlError(`text after the root element at offset ${i}`);
      if (stack.length > 0) stack[stack.length - 1].text += decodeEntities(text.slice(i));
      break;
    }
    if (lt > i && stack.length > 0) stack[stack.length - 1].text += decodeEntities(text.slice(i, lt));
    else if (lt > i && text.slice(i, lt).trim() !== '')
      throw new XmlError(`text outside the root element at offset ${i}`);
    if (text.startsWith('<?', lt)) {
      const end = text.indexOf('?>', lt);
      if (end < 0) throw new XmlError('unterminated processing instruction');
      i = end + 2;
    } else if (text.startsWith('<!--', lt)) {
      const end = text.indexOf('-->', lt);
      if (end < 0) throw new XmlError('unterminated comment');
      i = end + 3;
    } else if (text.startsWith('<![CDATA[', lt)) {
      const end = text.indexOf(']]>', lt);
      if (end < 0) throw new XmlError('unterminated CDATA section');
      if (stack.length === 0) throw new XmlError('CDATA outside the root element');
      stack[stack.length - 1].text += text.slice(lt + 9, end);
      i = end + 3;
    } else if (text.startsWith('<!', lt)) {
      const end = text.indexOf('>', lt);
      if (end < 0) throw new XmlError('unterminated declaration');
      i = end + 1;
    } else if (text[lt + 1] === '/') {
      const end = text.indexOf('>', lt);
      if (end < 0) throw new XmlError('unterminated end tag');
      const tag = localName(text.slice(lt + 2, end).trim());
      const top = stack.pop();
      if (!top || top.tag !== tag) throw new XmlError(`mismatched end tag </${tag}> at offset ${lt}`);
      const value = top.hasChild ? top.node : top.text.trim();
      if (stack.length === 0) root = top.hasChild ? { [tag]: top.node } : { [tag]: value };
      else {
        const parent = stack[stack.length - 1];
        parent.hasChild = true;
        add(parent.node, tag, value);
      }
      i = end + 1;
    } else {
      const end = findTagEnd(text, lt);
      let inner = text.slice(lt + 1, end);
      const selfClosing = inner.endsWith('/');
      if (selfClosing) inner = inner.slice(0, -1);
      const m = /^([A-Za-z_][\w.:-]*)/.exec(inner);
      if (!m) throw new XmlError(`malformed start tag at offset ${lt}`);
      if (root !== undefined) throw new XmlError(`more than one root element (offset ${lt})`);
      const tag = localName(m[1]);
      if (selfClosing) {
        if (stack.length === 0) root = { [tag]: '' };
        else {
          const parent = stack[stack.length - 1];
          parent.hasChild = true;
          add(parent.node, tag, '');
        }
      } else {
        stack.push({ tag, node: {}, text: '', hasChild: false });
      }
      i = end + 1;
    }
  }
  if (stack.length > 0) throw new XmlError(`unclosed element <${stack[stack.length - 1].tag}>`);
  if (!root) throw new XmlError('no root element');
  return root;
}

/** End of a start tag, skipping '>' inside quoted attribute values. */
function findTagEnd(text: string, from: number): number {
  let quote = '';
  for (let j = from + 1; j < text.length; j++) {
    const ch = text[j];
    if (quote) {
      if (ch === quote) quote = '';
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '>') return j;
  }
  throw new XmlError(`unterminated start tag at offset ${from}`);
}
