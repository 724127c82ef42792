// The classic Porter (1980) stemmer as Lucene's PorterStemFilter applies it: on UTF-16 code
// units, lowercase ASCII vowels only (anything else counts as a consonant), words of one or two
// code units left alone, and the reference implementation's departures from the paper
// ("bli" → "ble", "logi" → "log").

const CODE_A = 0x61;
const CODE_E = 0x65;
const CODE_I = 0x69;
const CODE_L = 0x6c;
const CODE_O = 0x6f;
const CODE_S = 0x73;
const CODE_T = 0x74;
const CODE_U = 0x75;
const CODE_W = 0x77;
const CODE_X = 0x78;
const CODE_Y = 0x79;
const CODE_Z = 0x7a;

class PorterWord {
  private readonly chars: number[];
  /** Index of the last code unit of the current stem. */
  private end: number;
  /** Index of the last code unit before the suffix matched by the last successful `endsWith`. */
  private stemEnd = 0;

  constructor(word: string) {
    this.chars = new Array<number>(word.length);
    for (let i = 0; i < word.length; i++) this.chars[i] = word.charCodeAt(i);
    this.end = word.length - 1;
  }

  stem(): string {
    if (this.end > 1) {
      this.removePluralsAndEdIng();
      this.turnTerminalYToI();
      this.mapDoubleSuffixes();
      this.mapIcFulNessSuffixes();
      this.removeSingleSuffixes();
      this.tidyFinalEAndDoubleL();
    }
    let out = '';
    for (let i = 0; i <= this.end; i++) out += String.fromCharCode(this.chars[i] ?? 0);
    return out;
  }

  private at(i: number): number {
    return this.chars[i] ?? 0;
  }

  private isConsonant(i: number): boolean {
    const c = this.at(i);
    if (c === CODE_A || c === CODE_E || c === CODE_I || c === CODE_O || c === CODE_U) return false;
    if (c === CODE_Y) return i === 0 ? true : !this.isConsonant(i - 1);
    return true;
  }

  /** Number of vowel-consonant sequences in chars[0..stemEnd]. */
  private measure(): number {
    let n = 0;
    let i = 0;
    const last = this.stemEnd;
    while (true) {
      if (i > last) return n;
      if (!this.isConsonant(i)) break;
      i++;
    }
    i++;
    while (true) {
      while (true) {
        if (i > last) return n;
        if (this.isConsonant(i)) break;
        i++;
      }
      i++;
      n++;
      while (true) {
        if (i > last) return n;
        if (!this.isConsonant(i)) break;
        i++;
      }
      i++;
    }
  }

  private vowelInStem(): boolean {
    for (let i = 0; i <= this.stemEnd; i++) if (!this.isConsonant(i)) return true;
    return false;
  }

  private isDoubleConsonant(i: number): boolean {
    return i >= 1 && this.at(i) === this.at(i - 1) && this.isConsonant(i);
  }

  /** consonant-vowel-consonant ending at i, where the last consonant is not w, x or y. */
  private isCvc(i: number): boolean {
    if (i < 2 || !this.isConsonant(i) || this.isConsonant(i - 1) || !this.isConsonant(i - 2)) {
      return false;
    }
    const c = this.at(i);
    return c !== CODE_W && c !== CODE_X && c !== CODE_Y;
  }

  private endsWith(suffix: string): boolean {
    const length = suffix.length;
    const offset = this.end - length + 1;
    if (offset < 0) return false;
    for (let i = 0; i < length; i++) {
      if (this.at(offset + i) !== suffix.charCodeAt(i)) return false;
    }
    this.stemEnd = this.end - length;
    return true;
  }

  private replaceSuffix(replacement: string): void {
    const start = this.stemEnd + 1;
    for (let i = 0; i < replacement.length; i++) {
      this.chars[start + i] = replacement.charCodeAt(i);
    }
    this.end = this.stemEnd + replacement.length;
  }

  private replaceSuffixIfMeasured(replacement: string): void {
    if (this.measure() > 0) this.replaceSuffix(replacement);
  }

  private removePluralsAndEdIng(): void {
    if (this.at(this.end) === CODE_S) {
      if (this.endsWith('sses')) this.end -= 2;
      else if (this.endsWith('ies')) this.replaceSuffix('i');
      else if (this.at(this.end - 1) !== CODE_S) this.end--;
    }
    if (this.endsWith('eed')) {
      if (this.measure() > 0) this.end--;
    } else if ((this.endsWith('ed') || this.endsWith('ing')) && this.vowelInStem()) {
      this.end = this.stemEnd;
      if (this.endsWith('at')) this.replaceSuffix('ate');
      else if (this.endsWith('bl')) this.replaceSuffix('ble');
      else if (this.endsWith('iz')) this.replaceSuffix('ize');
      else if (this.isDoubleConsonant(this.end)) {
        const c = this.at(this.end);
        if (c !== CODE_L && c !== CODE_S && c !== CODE_Z) this.end--;
      } else {
        this.stemEnd = this.end;
        if (this.measure() === 1 && this.isCvc(this.end)) this.replaceSuffix('e');
      }
    }
  }

  private turnTerminalYToI(): void {
    if (this.endsWith('y') && this.vowelInStem()) this.chars[this.end] = CODE_I;
  }

  private replaceFirstMatching(pairs: ReadonlyArray<readonly [string, string]>): void {
    for (const [suffix, replacement] of pairs) {
      if (this.endsWith(suffix)) {
        this.replaceSuffixIfMeasured(replacement);
        return;
      }
    }
  }

  private mapDoubleSuffixes(): void {
    if (this.end === 0) return;
    const pairs = DOUBLE_SUFFIXES.get(this.at(this.end - 1));
    if (pairs) this.replaceFirstMatching(pairs);
  }

  private mapIcFulNessSuffixes(): void {
    const pairs = IC_FUL_NESS_SUFFIXES.get(this.at(this.end));
    if (pairs) this.replaceFirstMatching(pairs);
  }

  private removeSingleSuffixes(): void {
    if (this.end === 0) return;
    const suffixes = SINGLE_SUFFIXES.get(this.at(this.end - 1));
    if (!suffixes) return;
    let matched = false;
    for (const suffix of suffixes) {
      if (!this.endsWith(suffix)) continue;
      if (suffix === 'ion') {
        const before = this.at(this.stemEnd);
        if (this.stemEnd < 0 || (before !== CODE_S && before !== CODE_T)) continue;
      }
      matched = true;
      break;
    }
    if (matched && this.measure() > 1) this.end = this.stemEnd;
  }

  private tidyFinalEAndDoubleL(): void {
    this.stemEnd = this.end;
    if (this.at(this.end) === CODE_E) {
      const m = this.measure();
      if (m > 1 || (m === 1 && !this.isCvc(this.end - 1))) this.end--;
    }
    if (this.at(this.end) === CODE_L && this.isDoubleConsonant(this.end) && this.measure() > 1) {
      this.end--;
    }
  }
}

function byPenultimateLetter<T>(entries: Record<string, T>): Map<number, T> {
  return new Map(Object.entries(entries).map(([letter, value]) => [letter.charCodeAt(0), value]));
}

const DOUBLE_SUFFIXES = byPenultimateLetter<ReadonlyArray<readonly [string, string]>>({
  a: [
    ['ational', 'ate'],
    ['tional', 'tion'],
  ],
  c: [
    ['enci', 'ence'],
    ['anci', 'ance'],
  ],
  e: [['izer', 'ize']],
  l: [
    ['bli', 'ble'],
    ['alli', 'al'],
    ['entli', 'ent'],
    ['eli', 'e'],
    ['ousli', 'ous'],
  ],
  o: [
    ['ization', 'ize'],
    ['ation', 'ate'],
    ['ator', 'ate'],
  ],
  s: [
    ['alism', 'al'],
    ['iveness', 'ive'],
    ['fulness', 'ful'],
    ['ousness', 'ous'],
  ],
  t: [
    ['aliti', 'al'],
    ['iviti', 'ive'],
    ['biliti', 'ble'],
  ],
  g: [['logi', 'log']],
});

const IC_FUL_NESS_SUFFIXES = byPenultimateLetter<ReadonlyArray<readonly [string, string]>>({
  e: [
    ['icate', 'ic'],
    ['ative', ''],
    ['alize', 'al'],
  ],
  i: [['iciti', 'ic']],
  l: [
    ['ical', 'ic'],
    ['ful', ''],
  ],
  s: [['ness', '']],
});

const SINGLE_SUFFIXES = byPenultimateLetter<readonly string[]>({
  a: ['al'],
  c: ['ance', 'ence'],
  e: ['er'],
  i: ['ic'],
  l: ['able', 'ible'],
  n: ['ant', 'ement', 'ment', 'ent'],
  o: ['ion', 'ou'],
  s: ['ism'],
  t: ['ate', 'iti'],
  u: ['ous'],
  v: ['ive'],
  z: ['ize'],
});

export function porterStem(word: string): string {
  return new PorterWord(word).stem();
}
