// Python's csv.reader (excel dialect, strict=False) and csv.DictReader over a file opened in text
// mode, as check_csv reads it: the state machine of CPython's _csv.c, line by line.
import { PyDict, type PyValue } from './values.js';
import { pyTextLines } from './text-files.js';
import { PythonException } from './exceptions.js';

const fieldLimit = 131072;

type State =
  'startRecord' | 'startField' | 'inField' | 'inQuotedField' | 'quoteInQuotedField' | 'eatCrnl';

/** csv.reader over the lines of a text-mode file: each record as a list of fields. */
export function pyCsvRows(text: string): string[][] {
  const rows: string[][] = [];
  let state: State = 'startRecord';
  let fields: string[] = [];
  let field = '';
  let fieldLength = 0;
  const saveField = (): void => {
    fields.push(field);
    field = '';
    fieldLength = 0;
  };
  const addChar = (char: string): void => {
    if (fieldLength >= fieldLimit) {
      throw new PythonException('Error', `field larger than field limit (${fieldLimit})`);
    }
    field += char;
    fieldLength++;
  };
  // EOL is the end-of-line signal the C reader sends after each line's characters.
  const processChar = (char: string | 'EOL'): void => {
    const newline = char === '\n' || char === '\r';
    if (state === 'startRecord') {
      if (char === 'EOL') return;
      if (newline) {
        state = 'eatCrnl';
        return;
      }
      // a normal character starts the first field
      state = 'startField';
    }
    switch (state) {
      case 'startField':
        if (newline || char === 'EOL') {
          saveField();
          state = char === 'EOL' ? 'startRecord' : 'eatCrnl';
        } else if (char === '"') {
          state = 'inQuotedField';
        } else if (char === ',') {
          saveField();
        } else {
          addChar(char);
          state = 'inField';
        }
        return;
      case 'inField':
        if (newline || char === 'EOL') {
          saveField();
          state = char === 'EOL' ? 'startRecord' : 'eatCrnl';
        } else if (char === ',') {
          saveField();
          state = 'startField';
        } else {
          addChar(char);
        }
        return;
      case 'inQuotedField':
        if (char === 'EOL') return;
        if (char === '"') state = 'quoteInQuotedField';
        else addChar(char);
        return;
      case 'quoteInQuotedField':
        if (char === '"') {
          addChar(char);
          state = 'inQuotedField';
        } else if (char === ',') {
          saveField();
          state = 'startField';
        } else if (newline || char === 'EOL') {
          saveField();
          state = char === 'EOL' ? 'startRecord' : 'eatCrnl';
        } else {
          // not strict: a character after a closing quote continues the field unquoted
          addChar(char);
          state = 'inField';
        }
        return;
      case 'eatCrnl':
        if (newline) return;
        if (char === 'EOL') {
          state = 'startRecord';
          return;
        }
        throw new PythonException(
          'Error',
          "new-line character seen in unquoted field - do you need to open the file with newline=''?",
        );
    }
  };
  for (const line of pyTextLines(text)) {
    for (const char of line) processChar(char);
    processChar('EOL');
    if (state === 'startRecord') {
      rows.push(fields);
      fields = [];
    }
  }
  // End of input inside a record: what has been read is the last row (strict=False).
  if (fieldLength !== 0 || (state as State) === 'inQuotedField') {
    saveField();
    rows.push(fields);
  }
  return rows;
}

/**
 * csv.DictReader: the first row names the fields; blank rows are skipped; extra fields go under the
 * key None (restkey) and missing ones are None (restval).
 */
export function pyCsvDictRows(text: string): PyDict[] {
  const [header, ...rows] = pyCsvRows(text);
  if (header === undefined) return [];
  return rows
    .filter((row) => row.length > 0)
    .map((row) => {
      const record = PyDict.fromEntries(
        header.slice(0, row.length).map((name, index) => [name, row[index] as string]),
      );
      if (header.length < row.length) record.set(null, row.slice(header.length));
      else for (const name of header.slice(row.length)) record.set(name, null as PyValue);
      return record;
    });
}
