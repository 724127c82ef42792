// Python's `shlex.split(s)` (POSIX mode, no comments), which the VM server applies to a string
// command sent without `shell`. Errors carry Python's messages.

const WHITESPACE = new Set([' ', '\t', '\r', '\n']);

class ShlexError extends Error {
  override readonly name = 'ValueError';
}

export function shlexSplit(text: string): string[] {
  const tokens: string[] = [];
  let token = '';
  let quoted = false;
  // ' ' between tokens, 'a' in a word, a quote char inside quotes, '\\' after an escape.
  let state = ' ';
  let escapedState = 'a';
  const flush = () => {
    if (token.length > 0 || quoted) tokens.push(token);
    token = '';
    quoted = false;
  };
  for (const char of text) {
    if (state === ' ' || state === 'a') {
      if (WHITESPACE.has(char)) {
        if (state === 'a') flush();
        state = ' ';
      } else if (char === '\\') {
        escapedState = 'a';
        state = '\\';
      } else if (char === "'" || char === '"') {
        state = char;
      } else {
        token += char;
        state = 'a';
      }
    } else if (state === "'" || state === '"') {
      quoted = true;
      if (char === state) state = 'a';
      else if (char === '\\' && state === '"') {
        escapedState = state;
        state = '\\';
      } else token += char;
    } else {
      // After a backslash: inside double quotes only `"` and `\` are escaped; elsewhere anything is.
      if (escapedState === '"' && char !== '\\' && char !== escapedState) token += '\\';
      token += char;
      state = escapedState;
    }
  }
  if (state === "'" || state === '"') throw new ShlexError('No closing quotation');
  if (state === '\\') throw new ShlexError('No escaped character');
  flush();
  return tokens;
}
