import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadEasyId3 } from './id3-tags.js';
import { UnsupportedPythonFeature, PythonException } from '../python/exceptions.js';

const dir = await mkdtemp(join(tmpdir(), 'id3-tags-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

const audio = Buffer.concat([Buffer.from([0xff, 0xfb, 0x90, 0x00]), Buffer.alloc(400)]);
const syncsafe = (size: number) =>
  Buffer.from([(size >> 21) & 0x7f, (size >> 14) & 0x7f, (size >> 7) & 0x7f, size & 0x7f]);
const tag = (version: 3 | 4, frames: Buffer[]) => {
  const body = Buffer.concat(frames);
  return Buffer.concat([
    Buffer.from([0x49, 0x44, 0x33, version, 0, 0]),
    syncsafe(body.length),
    body,
  ]);
};
const frame = (version: 3 | 4, id: string, body: Buffer) => {
  const size = Buffer.alloc(4);
  if (version === 4) syncsafe(body.length).copy(size);
  else size.writeUInt32BE(body.length);
  return Buffer.concat([Buffer.from(id, 'latin1'), size, Buffer.from([0, 0]), body]);
};
const id3v1 = (title: string, album: string, genre: number) =>
  Buffer.concat([
    Buffer.from('TAG', 'latin1'),
    Buffer.from(title.padEnd(30, '\0'), 'latin1'),
    Buffer.alloc(30),
    Buffer.from(album.padEnd(30, '\0'), 'latin1'),
    Buffer.from('    ', 'latin1'),
    Buffer.alloc(30),
    Buffer.from([genre]),
  ]);
const file = async (name: string, bytes: Buffer) => {
  const path = join(dir, name);
  await writeFile(path, bytes);
  return path;
};

describe('EasyID3 as mutagen reads it', () => {
  it('reads a v2.3 tag: UTF-16 text, several values, TYER+TDAT as the date, v1 filling the gaps', async () => {
    const utf16 = Buffer.concat([Buffer.from([1, 0xff, 0xfe]), Buffer.from('夜上海', 'utf16le')]);
    const path = await file(
      'v23.mp3',
      Buffer.concat([
        tag(3, [
          frame(3, 'TIT2', utf16),
          frame(3, 'TPE1', Buffer.from('\0Cheng\0Zhou', 'latin1')),
          frame(3, 'TYER', Buffer.from('\x001999', 'latin1')),
          frame(3, 'TDAT', Buffer.from('\x000512', 'latin1')),
        ]),
        audio,
        id3v1('V1 title', 'V1 album', 255),
      ]),
    );
    const tags = await loadEasyId3(path);
    expect(tags.get('Title')).toEqual(['夜上海']);
    expect(tags.get('artist')).toEqual(['Cheng', 'Zhou']);
    expect(tags.get('date')).toEqual(['1999-12-05']);
    expect(tags.get('album')).toEqual(['V1 album']);
    expect(tags.get('composer')).toBeUndefined();
  });

  it('keeps an empty trailing value in v2.4 but not the zero padding of v2.3', async () => {
    const v24 = await file(
      'v24.mp3',
      Buffer.concat([tag(4, [frame(4, 'TIT2', Buffer.from('\x03Title\0\0', 'latin1'))]), audio]),
    );
    const v23 = await file(
      'v23pad.mp3',
      Buffer.concat([tag(3, [frame(3, 'TIT2', Buffer.from('\0Title\0\0', 'latin1'))]), audio]),
    );
    expect((await loadEasyId3(v24)).get('title')).toEqual(['Title', '']);
    expect((await loadEasyId3(v23)).get('title')).toEqual(['Title']);
  });

  it('normalises timestamps as ID3TimeStamp does', async () => {
    const path = await file(
      'date.mp3',
      Buffer.concat([tag(4, [frame(4, 'TDRC', Buffer.from('\x031990-5-3', 'latin1'))]), audio]),
    );
    expect((await loadEasyId3(path)).get('date')).toEqual(['1990-05-03']);
  });

  it('raises ID3NoHeaderError without an ID3v2 or ID3v1 tag, and reads a v1-only file', async () => {
    const none = await file('none.mp3', audio);
    await expect(loadEasyId3(none)).rejects.toSatisfy(
      (error) => error instanceof PythonException && error.type === 'ID3NoHeaderError',
    );
    const v1 = await file('v1.mp3', Buffer.concat([audio, id3v1('Only v1', '', 17)]));
    const tags = await loadEasyId3(v1);
    expect(tags.get('title')).toEqual(['Only v1']);
    // ID3v1 genre 17 needs mutagen's genre table
    expect(() => tags.get('genre')).toThrow(UnsupportedPythonFeature);
  });
});
