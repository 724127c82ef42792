// ID3 tags read as mutagen's EasyID3(path) presents them to check_mp3_meta (mutagen 1.46 behaviour):
// ID3v2.2/2.3/2.4 text frames (unsynchronisation, iTunes' non-syncsafe v2.4 sizes, zlib-compressed
// frames, multiple values), duplicate frames merged, an ID3v1 tag filling what v2 lacks, TYER/TDAT/
// TIME turned into TDRC, timestamps normalised.
//
// Not supported (UnsupportedPythonFeature): the EasyID3 keys performer:*, musicbrainz_trackid,
// website and replaygain_*; a genre given by ID3v1 number (needs mutagen's genre table).
import { inflateSync } from 'node:zlib';
import { pyRepr, type PyValue } from '../python/values.js';
import { pyIsInstance, UnsupportedPythonFeature, PythonException } from '../python/exceptions.js';
import { pyReadBytes } from '../python/text-files.js';

/** Every frame ID mutagen knows (v2.3/2.4), which its v2.4 size heuristic counts. */
const knownFrameIds = new Set(
  (
    'AENC APIC ASPI CHAP COMM COMR CTOC ENCR EQU2 ETCO GEOB GRID GRP1 IPLS LINK MCDI MLLT MVIN ' +
    'MVNM OWNE PCNT PCST POPM POSS PRIV RBUF RVA2 RVAD RVRB SEEK SIGN SYLT SYTC TALB TBPM TCAT ' +
    'TCMP TCOM TCON TCOP TDAT TDEN TDES TDLY TDOR TDRC TDRL TDTG TENC TEXT TFLT TGID TIME TIPL ' +
    'TIT1 TIT2 TIT3 TKEY TKWD TLAN TLEN TMCL TMED TMOO TOAL TOFN TOLY TOPE TORY TOWN TPE1 TPE2 ' +
    'TPE3 TPE4 TPOS TPRO TPUB TRCK TRDA TRSN TRSO TSIZ TSO2 TSOA TSOC TSOP TSOT TSRC TSSE TSST ' +
    'TXXX TYER UFID USER USLT WCOM WCOP WFED WOAF WOAR WOAS WORS WPAY WPUB WXXX'
  ).split(' '),
);

/** The text frames whose values EasyID3 can reach (plain text, numbers, timestamps). */
const textFrameIds = new Set(
  (
    'GRP1 MVIN MVNM TALB TBPM TCAT TCMP TCOM TCON TCOP TDAT TDEN TDES TDLY TDOR TDRC TDRL TDTG ' +
    'TENC TEXT TFLT TGID TIME TIT1 TIT2 TIT3 TKEY TKWD TLAN TLEN TMED TMOO TOAL TOFN TOLY TOPE ' +
    'TORY TOWN TPE1 TPE2 TPE3 TPE4 TPOS TPRO TPUB TRCK TRDA TRSN TRSO TSIZ TSO2 TSOA TSOC TSOP ' +
    'TSOT TSRC TSSE TSST TYER'
  ).split(' '),
);
const timestampFrameIds = new Set(['TDEN', 'TDOR', 'TDRC', 'TDRL', 'TDTG']);

/** ID3v2.2 frame IDs and the v2.3/2.4 frames mutagen upgrades them to (text frames only). */
const v22TextFrames: Readonly<Record<string, string>> = {
  TAL: 'TALB',
  TBP: 'TBPM',
  TCM: 'TCOM',
  TCO: 'TCON',
  TCP: 'TCMP',
  TCR: 'TCOP',
  TDA: 'TDAT',
  TDY: 'TDLY',
  TEN: 'TENC',
  TFT: 'TFLT',
  TIM: 'TIME',
  TKE: 'TKEY',
  TLA: 'TLAN',
  TLE: 'TLEN',
  TMT: 'TMED',
  TOA: 'TOPE',
  TOF: 'TOFN',
  TOL: 'TOLY',
  TOR: 'TORY',
  TOT: 'TOAL',
  TP1: 'TPE1',
  TP2: 'TPE2',
  TP3: 'TPE3',
  TP4: 'TPE4',
  TPA: 'TPOS',
  TPB: 'TPUB',
  TRC: 'TSRC',
  TRD: 'TRDA',
  TRK: 'TRCK',
  TS2: 'TSO2',
  TSA: 'TSOA',
  TSC: 'TSOC',
  TSI: 'TSIZ',
  TSP: 'TSOP',
  TSS: 'TSSE',
  TST: 'TSOT',
  TT1: 'TIT1',
  TT2: 'TIT2',
  TT3: 'TIT3',
  TXT: 'TEXT',
  TXX: 'TXXX',
  TYE: 'TYER',
  GP1: 'GRP1',
  MVI: 'MVIN',
  MVN: 'MVNM',
};

/** EasyID3's plain text keys and their frames. */
const easyTextKeys: Readonly<Record<string, string>> = {
  album: 'TALB',
  bpm: 'TBPM',
  compilation: 'TCMP',
  composer: 'TCOM',
  copyright: 'TCOP',
  encodedby: 'TENC',
  lyricist: 'TEXT',
  length: 'TLEN',
  media: 'TMED',
  mood: 'TMOO',
  grouping: 'TIT1',
  title: 'TIT2',
  version: 'TIT3',
  artist: 'TPE1',
  albumartist: 'TPE2',
  conductor: 'TPE3',
  arranger: 'TPE4',
  discnumber: 'TPOS',
  organization: 'TPUB',
  tracknumber: 'TRCK',
  author: 'TOLY',
  albumartistsort: 'TSO2',
  albumsort: 'TSOA',
  composersort: 'TSOC',
  artistsort: 'TSOP',
  titlesort: 'TSOT',
  isrc: 'TSRC',
  discsubtitle: 'TSST',
  language: 'TLAN',
};

/** EasyID3's keys stored in TXXX frames, by their description. */
const easyTxxxKeys: Readonly<Record<string, string>> = {
  musicbrainz_artistid: 'MusicBrainz Artist Id',
  musicbrainz_albumid: 'MusicBrainz Album Id',
  musicbrainz_albumartistid: 'MusicBrainz Album Artist Id',
  musicbrainz_trmid: 'MusicBrainz TRM Id',
  musicip_puid: 'MusicIP PUID',
  musicip_fingerprint: 'MusicMagic Fingerprint',
  musicbrainz_albumstatus: 'MusicBrainz Album Status',
  musicbrainz_albumtype: 'MusicBrainz Album Type',
  releasecountry: 'MusicBrainz Album Release Country',
  musicbrainz_discid: 'MusicBrainz Disc Id',
  asin: 'ASIN',
  performer: 'PERFORMER',
  barcode: 'BARCODE',
  catalognumber: 'CATALOGNUMBER',
  musicbrainz_releasetrackid: 'MusicBrainz Release Track Id',
  musicbrainz_releasegroupid: 'MusicBrainz Release Group Id',
  musicbrainz_workid: 'MusicBrainz Work Id',
  acoustid_fingerprint: 'Acoustid Fingerprint',
  acoustid_id: 'Acoustid Id',
};

/** A frame that cannot be parsed: mutagen drops it silently (ID3JunkFrameError). */
class JunkFrame extends Error {}

const syncsafe = (bytes: Uint8Array): number =>
  bytes.reduce((value, byte) => value * 128 + (byte & 0x7f), 0);
const bigEndian = (bytes: Uint8Array): number =>
  bytes.reduce((value, byte) => value * 256 + byte, 0);
const validPadding = (bytes: Uint8Array): boolean => bytes.every((byte) => (byte & 0x80) === 0);

/** mutagen's unsynch.decode: undoes 0xFF 0x00 stuffing; invalid data raises. */
function unsynchronise(data: Uint8Array): Uint8Array {
  const out: number[] = [];
  for (let index = 0; index < data.length; index++) {
    const byte = data[index] as number;
    out.push(byte);
    if (byte !== 0xff) continue;
    const next = data[index + 1];
    if (next === undefined) throw new Error('string ended unsafe');
    if (next >= 0xe0) throw new Error('invalid sync-safe string');
    if (next === 0x00) index++;
  }
  return Uint8Array.from(out);
}

/** Decodes UTF-16 code units strictly (a lone surrogate is an error, as in Python). */
function decodeUtf16Units(units: readonly number[]): string {
  let out = '';
  for (let index = 0; index < units.length; index++) {
    const unit = units[index] as number;
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const low = units[index + 1];
      if (low === undefined || low < 0xdc00 || low > 0xdfff) throw new Error('illegal surrogate');
      out += String.fromCharCode(unit, low);
      index++;
    } else if (unit >= 0xdc00 && unit <= 0xdfff) {
      throw new Error('illegal surrogate');
    } else {
      out += String.fromCharCode(unit);
    }
  }
  return out;
}

/**
 * mutagen's decode_terminated(strict=False): the text up to the first NUL character and the bytes
 * after it. Throws where Python's codec raises.
 */
function decodeTerminated(data: Uint8Array, encoding: number): [string, Uint8Array] {
  if (encoding === 0 || encoding === 3) {
    const end = data.indexOf(0);
    const head = end === -1 ? data : data.subarray(0, end);
    const text =
      encoding === 0
        ? Buffer.from(head).toString('latin1')
        : new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(head);
    return [text, end === -1 ? new Uint8Array() : data.subarray(end + 1)];
  }
  // UTF-16: the 'utf16' codec reads a BOM (little-endian without one), 'utf_16_be' does not.
  let littleEndian = encoding === 1;
  let start = 0;
  if (encoding === 1 && data.length >= 2) {
    if (data[0] === 0xff && data[1] === 0xfe) start = 2;
    else if (data[0] === 0xfe && data[1] === 0xff) {
      littleEndian = false;
      start = 2;
    }
  }
  const units: number[] = [];
  for (let index = start; index + 1 < data.length; index += 2) {
    const unit = littleEndian
      ? (data[index] as number) | ((data[index + 1] as number) << 8)
      : ((data[index] as number) << 8) | (data[index + 1] as number);
    if (unit === 0) return [decodeUtf16Units(units), data.subarray(index + 2)];
    units.push(unit);
  }
  if ((data.length - start) % 2 !== 0) throw new Error('truncated data');
  return [decodeUtf16Units(units), new Uint8Array()];
}

/** mutagen's iter_text_fixups + EncodedTextSpec.read for one value. */
function readEncodedText(
  data: Uint8Array,
  encoding: number,
  version: number,
): [string, Uint8Array] {
  const withByte = (bytes: Uint8Array, prefix: number[], suffix: number[]) =>
    Uint8Array.from([...prefix, ...bytes, ...suffix]);
  const attempts = [data];
  if (encoding === 2) attempts.push(withByte(data, [], [0]));
  if (encoding === 1) {
    attempts.push(withByte(data, [], [0]), withByte(data, [0xff, 0xfe], []));
    attempts.push(withByte(data, [0xff, 0xfe], [0]));
  }
  for (const attempt of attempts) {
    try {
      const [value, rest] = decodeTerminated(attempt, encoding);
      // Before v2.4, zero padding after a value is not an empty second value.
      if (version < 4 && rest.every((byte) => byte === 0)) return [value, new Uint8Array()];
      return [value, rest];
    } catch {
      continue;
    }
  }
  throw new JunkFrame('undecodable text');
}

interface TextFrame {
  readonly id: string;
  readonly values: string[];
}

/** A text or TXXX frame's values; JunkFrame where mutagen drops the frame. */
function parseTextFrame(id: string, data: Uint8Array, version: number): TextFrame {
  if (data.length === 0) throw new JunkFrame('no data left');
  const encoding = data[0] as number;
  if (encoding > 3) throw new JunkFrame('invalid encoding');
  let rest = data.subarray(1);
  let key = id;
  if (id === 'TXXX') {
    if (rest.length === 0) throw new JunkFrame('no data left');
    const [description, after] = readEncodedText(rest, encoding, version);
    key = `TXXX:${description}`;
    rest = after;
  }
  if (rest.length === 0) throw new JunkFrame('no data left');
  const values: string[] = [];
  while (rest.length > 0) {
    const [value, after] = readEncodedText(rest, encoding, version);
    values.push(value);
    rest = after;
  }
  return { id: key, values };
}

/** mutagen's determine_bpi: whether v2.4 frame sizes are syncsafe or (iTunes) plain integers. */
function sizesAreSyncsafe(data: Uint8Array): boolean {
  const scan = (syncsafeSizes: boolean): [number, number] => {
    let offset = 0;
    let found = 0;
    while (offset < data.length - 10) {
      const part = data.subarray(offset, offset + 10);
      if (part.every((byte) => byte === 0)) {
        return [found, -((data.length - offset) % 10)];
      }
      const size = syncsafeSizes ? syncsafe(part.subarray(4, 8)) : bigEndian(part.subarray(4, 8));
      offset += 10 + size;
      const name = part.subarray(0, 4);
      if (
        name.every((byte) => byte < 0x80) &&
        knownFrameIds.has(Buffer.from(name).toString('latin1'))
      ) {
        found++;
      }
    }
    return [found, offset - data.length];
  };
  const [asSyncsafe, syncsafeOverrun] = scan(true);
  const [asInt, intOverrun] = scan(false);
  return !(asInt > asSyncsafe || (asInt === asSyncsafe && syncsafeOverrun >= 1 && intOverrun <= 1));
}

/** The text frames of an ID3v2 tag body (mutagen's read_frames), upgraded to v2.3/2.4 IDs. */
function readFrames(tag: Uint8Array, version: number, tagUnsynchronised: boolean): TextFrame[] {
  let data = tag;
  if (version < 4 && tagUnsynchronised) {
    try {
      data = unsynchronise(data);
    } catch {
      // mutagen keeps the data as it is
    }
  }
  const frames: TextFrame[] = [];
  const headerSize = version === 2 ? 6 : 10;
  const syncsafeSizes = version === 4 && sizesAreSyncsafe(data);
  while (data.length > 0) {
    if (data.length < headerSize) break;
    const nameBytes = data.subarray(0, version === 2 ? 3 : 4);
    if (nameBytes.every((byte) => byte === 0)) break;
    const sizeBytes = data.subarray(version === 2 ? 3 : 4, version === 2 ? 6 : 8);
    const size = syncsafeSizes ? syncsafe(sizeBytes) : bigEndian(sizeBytes);
    const flags = version === 2 ? 0 : bigEndian(data.subarray(8, 10));
    let body = data.subarray(headerSize, headerSize + size);
    data = data.subarray(headerSize + size);
    if (size === 0) continue;
    if (!nameBytes.every((byte) => byte < 0x80)) continue;
    let name = Buffer.from(nameBytes).toString('latin1');
    if (version === 2) {
      const upgraded = v22TextFrames[name];
      if (upgraded === undefined) continue;
      name = upgraded;
    } else if (name.endsWith('\0')) {
      // someone writes 2.3 frames with 2.2 names
      const upgraded = v22TextFrames[name.slice(0, 3)];
      if (upgraded === undefined) continue;
      name = upgraded;
    }
    if (!textFrameIds.has(name) && name !== 'TXXX') continue;
    let dataLength: Uint8Array = new Uint8Array();
    try {
      if (version === 4) {
        if (flags & 0x0009) {
          dataLength = body.subarray(0, 4);
          body = body.subarray(4);
        }
        if (flags & 0x0002 || tagUnsynchronised) {
          try {
            body = unsynchronise(body);
          } catch {
            // loaded as it is
          }
        }
        if (flags & 0x0004) continue;
        if (flags & 0x0008) body = inflateV24(body, dataLength);
      } else if (version === 3) {
        if (flags & 0x0080) {
          if (body.length < 4) throw new JunkFrame('frame too small');
          body = body.subarray(4);
        }
        if (flags & 0x0040) continue;
        if (flags & 0x0080) body = inflateOrJunk(body);
      }
      frames.push(parseTextFrame(name, body, version));
    } catch (error) {
      if (!(error instanceof JunkFrame)) throw error;
    }
  }
  return frames;
}

function inflateOrJunk(body: Uint8Array): Uint8Array {
  try {
    return inflateSync(body);
  } catch {
    throw new JunkFrame('zlib');
  }
}

/** A v2.4 compressed frame; early mutagen wrote no data length, so the 4 bytes may be zlib data. */
function inflateV24(body: Uint8Array, dataLength: Uint8Array): Uint8Array {
  try {
    return inflateSync(body);
  } catch {
    return inflateOrJunk(Uint8Array.from([...dataLength, ...body]));
  }
}

/** mutagen's ParseID3v1 (through find_id3v1): text frames from the last 128 bytes. */
function readId3v1(file: Uint8Array, v1Version: 3 | 4): TextFrame[] | undefined {
  const tail = file.subarray(Math.max(0, file.length - 131));
  const tail3 = Buffer.from(tail);
  const index = tail3.indexOf('TAG');
  if (index === -1) return undefined;
  const ape = tail3.indexOf('APETAGEX');
  if (ape !== -1 && index === ape + 3) return undefined;
  const data = tail.subarray(index);
  if (data.length > 128 || data.length < 124) return undefined;
  const yearLength = data.length - 124;
  const field = (start: number, length: number) => data.subarray(start, start + length);
  // The comment (30 bytes after the year) only matters for its v1.1 track number.
  const comment = field(93 + yearLength, 30);
  const genre = data[123 + yearLength] as number;
  const track = comment[28] === 0 ? (comment[29] as number) : 0;
  const fix = (bytes: Uint8Array): string => {
    const end = bytes.indexOf(0);
    const text = Buffer.from(end === -1 ? bytes : bytes.subarray(0, end)).toString('latin1');
    return text.replace(/^[ \t\n\r\v\f]+|[ \t\n\r\v\f]+$/g, '');
  };
  const title = fix(field(3, 30));
  const artist = fix(field(33, 30));
  const album = fix(field(63, 30));
  const year = fix(field(93, yearLength));
  const frames: TextFrame[] = [];
  if (title) frames.push({ id: 'TIT2', values: [title] });
  if (artist) frames.push({ id: 'TPE1', values: [artist] });
  if (album) frames.push({ id: 'TALB', values: [album] });
  if (year) frames.push({ id: v1Version === 3 ? 'TYER' : 'TDRC', values: [year] });
  if (track) frames.push({ id: 'TRCK', values: [String(track)] });
  if (genre !== 255) frames.push({ id: 'TCON', values: [String(genre)] });
  return frames;
}

/** ID3TimeStamp's text: the parts read as integers, re-written as YYYY-MM-DD HH:MM:SS. */
function normaliseTimestamp(text: string): string {
  const parts = `${text}:::::`.split(/[-T:/.]|\s+/).slice(0, 6);
  const formats = [4, 2, 2, 2, 2, 2];
  const separators = ['-', '-', ' ', ':', ':', 'x'];
  let out = '';
  for (let index = 0; index < 6; index++) {
    const part = (parts[index] ?? '').trim().replaceAll('_', '');
    if (!/^[+-]?\d+$/.test(part)) break;
    // '-' is a separator, so a part is never negative
    const digits = String(Number(part)).padStart(formats[index] as number, '0');
    out += `${digits}${separators[index]}`;
  }
  return out.slice(0, -1);
}

/** The tags as EasyID3 holds them: frames by mutagen's HashKey (TXXX:desc for TXXX). */
export class EasyId3Tags {
  private constructor(private readonly frames: ReadonlyMap<string, readonly string[]>) {}

  static fromFrames(
    frames: readonly TextFrame[],
    v1: readonly TextFrame[] | undefined,
  ): EasyId3Tags {
    const byKey = new Map<string, string[]>();
    for (const frame of frames) {
      const existing = byKey.get(frame.id);
      if (existing === undefined) byKey.set(frame.id, [...frame.values]);
      // a repeated text frame: mutagen merges in the values it does not have yet
      else for (const value of frame.values) if (!existing.includes(value)) existing.push(value);
    }
    for (const frame of v1 ?? []) if (!byKey.has(frame.id)) byKey.set(frame.id, [...frame.values]);
    // update_to_v24: TYER (+TDAT, TIME) become TDRC when there is none, TORY becomes TDOR.
    const years = byKey.get('TYER') ?? [];
    const dates = byKey.get('TDAT') ?? [];
    const times = byKey.get('TIME') ?? [];
    const stamps: string[] = [];
    for (let index = 0; index < Math.max(years.length, dates.length, times.length); index++) {
      const ym = /^([0-9]{4})(-[0-9]{2}-[0-9]{2})?$/.exec(years[index] ?? '');
      const dm = /^([0-9]{2})([0-9]{2})$/.exec(dates[index] ?? '');
      const tm = /^([0-9]{2})([0-9]{2})$/.exec(times[index] ?? '');
      let stamp = '';
      if (ym) {
        stamp += ym[1];
        const monthDay = dm ? `-${dm[2]}-${dm[1]}` : ym[2];
        if (monthDay) {
          stamp += monthDay;
          if (tm) stamp += `T${tm[1]}:${tm[2]}:00`;
        }
      }
      if (stamp) stamps.push(stamp);
    }
    for (const id of ['TYER', 'TDAT', 'TIME']) byKey.delete(id);
    if (stamps.length > 0 && !byKey.has('TDRC')) byKey.set('TDRC', stamps);
    const tory = byKey.get('TORY');
    if (tory !== undefined) {
      byKey.delete('TORY');
      if (!byKey.has('TDOR')) byKey.set('TDOR', [tory.join('\0')]);
    }
    for (const id of ['TRDA', 'TSIZ']) byKey.delete(id);
    for (const id of timestampFrameIds) {
      const values = byKey.get(id);
      if (values !== undefined) byKey.set(id, values.map(normaliseTimestamp));
    }
    return new EasyId3Tags(byKey);
  }

  /** `easyid3.get(key)` without the default: the values, or undefined where EasyID3 raises KeyError. */
  get(key: string): string[] | undefined {
    const lower = key.toLowerCase();
    const frameId = easyTextKeys[lower];
    if (frameId !== undefined) return this.frames.get(frameId)?.slice();
    if (lower === 'date') return this.frames.get('TDRC')?.slice();
    if (lower === 'originaldate') return this.frames.get('TDOR')?.slice();
    const description = easyTxxxKeys[lower];
    if (description !== undefined) return this.frames.get(`TXXX:${description}`)?.slice();
    if (lower === 'genre') {
      const values = this.frames.get('TCON');
      return values === undefined ? undefined : genres(genres(values));
    }
    if (
      /^performer:/.test(lower) ||
      /^replaygain_.*_(gain|peak)$/.test(lower) ||
      lower === 'musicbrainz_trackid' ||
      lower === 'website'
    ) {
      throw new UnsupportedPythonFeature(`EasyID3 key ${pyRepr(key)}`);
    }
    return undefined;
  }
}

/** TCON.genres for values that name genres in words (ID3v1 genre numbers are not supported). */
function genres(values: readonly string[]): string[] {
  const out: string[] = [];
  for (const value of values) {
    if (/^\p{Nd}+$/u.test(value)) throw new UnsupportedPythonFeature('a numeric ID3 genre');
    if (value === 'CR') out.push('Cover');
    else if (value === 'RX') out.push('Remix');
    else if (value) {
      const match = /^((?:\((?:[0-9]+|RX|CR)\))*)(.+)?/su.exec(value) as RegExpExecArray;
      const found: string[] = [];
      const ids = match[1] ?? '';
      if (ids) {
        for (const id of ids.slice(1, -1).split(')(')) {
          if (id === 'CR') found.push('Cover');
          else if (id === 'RX') found.push('Remix');
          else throw new UnsupportedPythonFeature('a numeric ID3 genre');
        }
      }
      let name = match[2];
      if (name) {
        if (name.startsWith('((')) name = name.slice(1);
        if (!found.includes(name)) found.push(name);
      }
      out.push(...found);
    }
  }
  return out;
}

const id3Error = (type: string, message: string) => new PythonException(type, message);

/** `EasyID3(path)`: the file's tags, or mutagen's exception. */
export async function loadEasyId3(path: PyValue): Promise<EasyId3Tags> {
  let file: Uint8Array;
  try {
    file = await pyReadBytes(path);
  } catch (error) {
    // mutagen's loadfile turns an OSError into MutagenError
    if (pyIsInstance(error, 'OSError') && typeof path === 'string') {
      throw new PythonException('MutagenError', error.message);
    }
    throw error;
  }
  const name = typeof path === 'string' ? pyRepr(path) : '<unknown>';
  const header = file.subarray(0, 10);
  let headerError: PythonException | undefined;
  if (header.length !== 10) headerError = id3Error('ID3NoHeaderError', `${name}: too small`);
  else if (Buffer.from(header.subarray(0, 3)).toString('latin1') !== 'ID3') {
    headerError = id3Error('ID3NoHeaderError', `${name} doesn't start with an ID3 tag`);
  } else if (![2, 3, 4].includes(header[3] as number)) {
    headerError = id3Error(
      'ID3UnsupportedVersionError',
      `${name} ID3v2.${header[3]} not supported`,
    );
  }
  if (headerError !== undefined) {
    const v1 = readId3v1(file, 4);
    if (v1 === undefined) throw headerError;
    return EasyId3Tags.fromFrames([], v1);
  }
  const version = header[3] as number;
  const flags = header[5] as number;
  const sizeBytes = header.subarray(6, 10);
  if (!validPadding(sizeBytes)) throw id3Error('error', 'Header size not synchsafe');
  if ((version >= 4 && flags & 0x0f) || (version === 3 && flags & 0x1f)) {
    throw id3Error('error', `${name} has invalid flags`);
  }
  let offset = 10;
  let size = syncsafe(sizeBytes);
  if (flags & 0x40) {
    const extended = file.subarray(10, 14);
    if (extended.length < 4) throw id3Error('error', 'not enough data');
    const frameId = Buffer.from(extended).toString('latin1');
    if (!knownFrameIds.has(frameId)) {
      const extendedSize = version >= 4 ? syncsafe(extended) - 4 : bigEndian(extended);
      if (version >= 4 && !validPadding(extended)) {
        throw id3Error('error', 'Extended header size not synchsafe');
      }
      if (extendedSize < 0) throw id3Error('error', 'invalid extended header size');
      offset = 14 + extendedSize;
      size -= 4 + extendedSize;
    }
  }
  if (offset > file.length || size < 0 || offset + size > file.length) {
    throw id3Error('error', 'not enough data');
  }
  const frames = readFrames(file.subarray(offset, offset + size), version, (flags & 0x80) !== 0);
  const v1 = readId3v1(file, version === 4 ? 4 : 3);
  return EasyId3Tags.fromFrames(frames, v1);
}
