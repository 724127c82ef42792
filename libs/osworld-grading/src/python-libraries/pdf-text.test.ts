import { describe, expect, it } from 'vitest';
import { extractPdfText } from './pdf-text.js';

// A 300×200 page with Helvetica text whose content stream is:
//   BT /helv 10 Tf 20 170 Td [(Kerned)-250(gap)-900(wide)] TJ 0 -14 Td (Two  spaces) Tj
//   0 -14 Td (Same) Tj 40 0 Td (line) Tj 250 0 Td (outside) Tj ET
//   BT /helv 10 Tf 1 0 0 1 20 120 Tm (Last) Tj 8 Tc ( wide) Tj ET
// made and read with PyMuPDF 1.21.1 (Debian 12), whose page.get_text() printed MUPDF_TEXT.
const PDF =
  'JVBERi0xLjcKJcK1wrYKCjEgMCBvYmoKPDwvVHlwZS9DYXRhbG9nL1BhZ2VzIDIgMCBSPj4KZW5kb2JqCgoyIDAgb2JqCjw8L1R5cGUvUGFnZXMvQ291bnQgMS9LaWRzWzQgMCBSXT4+CmVuZG9iagoKMyAwIG9iago8PC9Gb250PDwvaGVsdiA1IDAgUj4+Pj4KZW5kb2JqCgo0IDAgb2JqCjw8L1R5cGUvUGFnZS9NZWRpYUJveFswIDAgMzAwIDIwMF0vUm90YXRlIDAvUmVzb3VyY2VzIDMgMCBSL1BhcmVudCAyIDAgUi9Db250ZW50cyA2IDAgUj4+CmVuZG9iagoKNSAwIG9iago8PC9UeXBlL0ZvbnQvU3VidHlwZS9UeXBlMS9CYXNlRm9udC9IZWx2ZXRpY2EvRW5jb2RpbmcvV2luQW5zaUVuY29kaW5nPj4KZW5kb2JqCgo2IDAgb2JqCjw8L0ZpbHRlci9GbGF0ZURlY29kZS9MZW5ndGggMTQ5Pj4Kc3RyZWFtCnjaVY67CsJAEEX7fMUtZ4vF2RBR24CN2jmdWCzZVRPywo3m981GIVgMDGfuHG4uWD18/YZhyA0pw2ymzeFCR/9svVM6XTPdba/0jpnG0nl1hRzA0CaLSZKxA0JvCx8UpEqWy9k2PiJkjNlKddl+yWT9oe41hGiNdC9J/t/IIObM3GwaaUAnG4Y5vYUUIIzL9wcBTTXFCmVuZHN0cmVhbQplbmRvYmoKCnhyZWYKMCA3CjAwMDAwMDAwMDAgNjU1MzYgZiAKMDAwMDAwMDAxNiAwMDAwMCBuIAowMDAwMDAwMDYyIDAwMDAwIG4gCjAwMDAwMDAxMTQgMDAwMDAgbiAKMDAwMDAwMDE1NSAwMDAwMCBuIAowMDAwMDAwMjYxIDAwMDAwIG4gCjAwMDAwMDAzNTAgMDAwMDAgbiAKCnRyYWlsZXIKPDwvU2l6ZSA3L1Jvb3QgMSAwIFIvSURbPDQzQTg5Qzg0N0VEMjkzNUFDMDBCODkxRkU5QUJDMzAxPjxCOTQ4QkFFODVGNzlCMzA5QTBCNUZDOThBMDU5QzQ5QT5dPj4Kc3RhcnR4cmVmCjU2OAolJUVPRgo=';
const MUPDF_TEXT = 'Kerned gap\nwide\nTwo  spaces\nSame\nline\nLast w i d e\n';

describe('extractPdfText', () => {
  it('lays text out as PyMuPDF 1.21 get_text() does', async () => {
    // Kerning of 2.5 pt adds a space, 9 pt starts a line; real double spaces stay; a 17 pt jump
    // starts a line; text beyond the MediaBox is dropped; 8 pt character spacing spaces letters.
    expect(await extractPdfText(new Uint8Array(Buffer.from(PDF, 'base64')))).toBe(MUPDF_TEXT);
  });

  it('rejects bytes that are not a PDF (compare_pdfs then scores the pair 0)', async () => {
    await expect(extractPdfText(new TextEncoder().encode('not a pdf'))).rejects.toThrow();
  });
});
