// PyYAML's `yaml.safe_load` (YAML 1.1 rules): the `yaml` package parses, then every scalar is typed
// with PyYAML's own implicit resolvers (yes/no/on/off are bools, 0o17 is a string, 017 is octal,
// 1:30 is 90, 1e5 is a string…) and mappings are built as Python dicts, merge keys included.
import {
  isAlias,
  isMap,
  isScalar,
  isSeq,
  parseAllDocuments,
  type Document,
  type Node as YamlNode,
  type Scalar,
} from 'yaml';
import { PyDict, PyOpaque, type PyValue } from './values.js';
import { UnsupportedPythonFeature, PythonException } from './exceptions.js';

const yamlTag = 'tag:yaml.org,2002:';

/** PyYAML's implicit resolvers, in registration order, with the first characters they apply to. */
const implicitResolvers: ReadonlyArray<readonly [string, RegExp, string]> = [
  [
    'bool',
    /^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$/,
    'yYnNtTfFoO',
  ],
  [
    'float',
    /^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/,
    '-+0123456789.',
  ],
  [
    'int',
    /^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$/,
    '-+0123456789',
  ],
  ['merge', /^(?:<<)$/, '<'],
  ['null', /^(?:~|null|Null|NULL|)$/, '~nN'],
  [
    'timestamp',
    /^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$/,
    '0123456789',
  ],
  ['value', /^(?:=)$/, '='],
];

/** The tag PyYAML resolves a plain scalar to. */
function resolvePlain(value: string): string {
  for (const [tag, pattern, firsts] of implicitResolvers) {
    const first = value[0];
    const applies = first === undefined ? tag === 'null' : firsts.includes(first);
    if (applies && pattern.test(value)) return tag;
  }
  return 'str';
}

const constructorError = (message: string): PythonException =>
  new PythonException('YAMLError', message);

function sexagesimal(text: string): number {
  return text.split(':').reduce((total, part) => total * 60 + Number(part), 0);
}

function constructInt(text: string): number | bigint {
  let value = text.replaceAll('_', '');
  const sign = value[0] === '-' ? -1n : 1n;
  if (value[0] === '-' || value[0] === '+') value = value.slice(1);
  const parse = (digits: string, radix: number): bigint => {
    const valid = { 2: /^[01]+$/, 8: /^[0-7]+$/, 10: /^[0-9]+$/, 16: /^[0-9a-fA-F]+$/ }[radix];
    if (valid === undefined || !valid.test(digits)) {
      throw new PythonException('ValueError', `invalid literal for int() with base ${radix}`);
    }
    const prefix = { 2: '0b', 8: '0o', 10: '', 16: '0x' }[radix] ?? '';
    return BigInt(prefix + digits);
  };
  let magnitude: bigint;
  if (value === '0') return 0;
  if (value.startsWith('0b')) magnitude = parse(value.slice(2), 2);
  else if (value.startsWith('0x')) magnitude = parse(value.slice(2), 16);
  else if (value[0] === '0') magnitude = parse(value, 8);
  else if (value.includes(':')) magnitude = BigInt(sexagesimal(value));
  else magnitude = parse(value, 10);
  const result = sign * magnitude;
  return result >= BigInt(Number.MIN_SAFE_INTEGER) && result <= BigInt(Number.MAX_SAFE_INTEGER)
    ? Number(result)
    : result;
}

function constructFloat(text: string): number {
  let value = text.replaceAll('_', '').toLowerCase();
  const sign = value[0] === '-' ? -1 : 1;
  if (value[0] === '-' || value[0] === '+') value = value.slice(1);
  if (value === '.inf') return sign * Infinity;
  if (value === '.nan') return Number.NaN;
  if (value.includes(':')) return sign * sexagesimal(value);
  const parsed = Number(value);
  if (value === '' || Number.isNaN(parsed)) {
    throw new PythonException('ValueError', `could not convert string to float: '${value}'`);
  }
  return sign * parsed;
}

function constructBool(text: string): boolean {
  return ['yes', 'true', 'on'].includes(text.toLowerCase());
}

class Constructor {
  private readonly anchors = new Map<string, YamlNode>();

  constructor(private readonly document: Document) {}

  construct(node: YamlNode | null): PyValue {
    if (node === null) return null;
    if (isAlias(node)) {
      const target = this.anchors.get(node.source);
      if (target === undefined) throw constructorError(`found undefined alias '${node.source}'`);
      return this.construct(target);
    }
    if (node.anchor !== undefined) this.anchors.set(node.anchor, node);
    if (isScalar(node)) return this.scalar(node);
    if (isSeq(node)) {
      this.checkTag(node.tag, 'seq');
      return node.items.map((item) => this.construct(item as YamlNode | null));
    }
    if (isMap(node)) {
      this.checkTag(node.tag, 'map');
      const dict = new PyDict();
      for (const [keyNode, valueNode] of this.flattenMapping(node)) {
        const key = this.construct(keyNode);
        if (Array.isArray(key) || key instanceof PyDict) {
          throw constructorError('while constructing a mapping found unhashable key');
        }
        dict.set(key, this.construct(valueNode));
      }
      return dict;
    }
    throw new UnsupportedPythonFeature('a YAML node of an unknown kind');
  }

  private checkTag(tag: string | undefined, kind: 'seq' | 'map'): void {
    if (tag === undefined || tag === `${yamlTag}${kind}`) return;
    if (tag.startsWith(yamlTag)) throw new UnsupportedPythonFeature(`YAML tag ${tag}`);
    throw constructorError(`could not determine a constructor for the tag '${tag}'`);
  }

  private isMergeKey(node: YamlNode | null): boolean {
    if (node === null || !isScalar(node)) return false;
    if (node.tag !== undefined) return node.tag === `${yamlTag}merge`;
    return node.type === 'PLAIN' && resolvePlain(String(node.value)) === 'merge';
  }

  /** PyYAML's flatten_mapping: `<<` entries first (later merges losing to earlier), then the rest. */
  private flattenMapping(node: YamlNode): Array<[YamlNode | null, YamlNode | null]> {
    if (!isMap(node)) throw constructorError('expected a mapping for merging');
    const merged: Array<[YamlNode | null, YamlNode | null]> = [];
    const own: Array<[YamlNode | null, YamlNode | null]> = [];
    const deref = (item: YamlNode | null): YamlNode | null => {
      if (item !== null && isAlias(item)) {
        const target = this.anchors.get(item.source);
        if (target === undefined) throw constructorError(`found undefined alias '${item.source}'`);
        return target;
      }
      if (item !== null && item.anchor !== undefined) this.anchors.set(item.anchor, item);
      return item;
    };
    for (const pair of node.items) {
      const key = pair.key as YamlNode | null;
      const value = deref(pair.value as YamlNode | null);
      if (!this.isMergeKey(key)) {
        own.push([key, value]);
        continue;
      }
      if (value !== null && isMap(value)) {
        merged.push(...this.flattenMapping(value));
      } else if (value !== null && isSeq(value)) {
        const groups = value.items.map((item) => {
          const target = deref(item as YamlNode | null);
          if (target === null || !isMap(target)) {
            throw constructorError('expected a mapping for merging');
          }
          return this.flattenMapping(target);
        });
        for (const group of groups.reverse()) merged.push(...group);
      } else {
        throw constructorError('expected a mapping or list of mappings for merging');
      }
    }
    return [...merged, ...own];
  }

  private scalar(node: Scalar): PyValue {
    const text = String(node.value);
    let tag: string;
    if (node.tag === undefined) {
      tag = node.type === 'PLAIN' ? resolvePlain(text) : 'str';
    } else if (node.tag === '!') {
      tag = 'str';
    } else if (node.tag.startsWith(yamlTag)) {
      tag = node.tag.slice(yamlTag.length);
    } else {
      throw constructorError(`could not determine a constructor for the tag '${node.tag}'`);
    }
    switch (tag) {
      case 'str':
        return text;
      case 'null':
        return null;
      case 'bool':
        return constructBool(text);
      case 'int':
        return constructInt(text);
      case 'float':
        return constructFloat(text);
      case 'timestamp':
        // A date or datetime object upstream: equal to nothing a task's JSON rule can hold.
        return new PyOpaque(/^\d{4}-\d\d-\d\d$/.test(text) ? 'date' : 'datetime', text);
      case 'value':
      case 'merge':
        throw constructorError(`could not determine a constructor for the tag '${yamlTag}${tag}'`);
      default:
        throw new UnsupportedPythonFeature(`YAML tag ${yamlTag}${tag}`);
    }
  }

  get root(): PyValue {
    return this.construct(this.document.contents as YamlNode | null);
  }
}

/** Characters PyYAML's reader refuses ("unacceptable character"). */
const nonPrintable = /[^\x09\x0A\x0D\x20-\x7E\x85\xA0-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

/**
 * `yaml.safe_load(text)`. Any failure PyYAML would report (syntax, unknown tag, unhashable key,
 * several documents) is a PythonException of type YAMLError or ValueError. Syntax acceptance is the
 * `yaml` package's in YAML 1.1 mode, which may differ from PyYAML's on malformed documents.
 */
export function pyYamlSafeLoad(text: string): PyValue {
  if (nonPrintable.test(text)) throw constructorError('unacceptable character');
  const documents = parseAllDocuments(text, {
    version: '1.1',
    schema: 'failsafe',
    uniqueKeys: false,
    merge: false,
  });
  if (!Array.isArray(documents)) throw constructorError('unparseable YAML stream');
  if (documents.length === 0) return null;
  if (documents.length > 1) {
    throw constructorError('expected a single document in the stream');
  }
  const document = documents[0] as Document;
  if (document.errors.length > 0) {
    throw constructorError(document.errors[0]?.message ?? 'invalid YAML');
  }
  return new Constructor(document).root;
}
