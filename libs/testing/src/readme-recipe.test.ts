import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// README's "Adding a benchmark" is the echo example's code: each `<!-- file: PATH -->` marker is
// followed by a fenced block that must be that file as it is, so the recipe cannot drift.

const REPO_DIR = fileURLToPath(new URL('../../..', import.meta.url));

/** Each file the README shows, with the text of the block that follows its marker. */
export function shownFiles(readme: string): Array<{ path: string; shown: string | undefined }> {
  return [...readme.matchAll(/^<!-- file: (\S+) -->\n```[a-z]*\n([\s\S]*?)^```$/gm)].map(
    (match) => ({ path: match[1]!, shown: match[2] }),
  );
}

describe("README's recipe", () => {
  const readme = readFileSync(join(REPO_DIR, 'README.md'), 'utf8');
  const section = readme.slice(
    readme.indexOf('### Adding a benchmark'),
    readme.indexOf('\n## ', readme.indexOf('### Adding a benchmark')),
  );

  it('shows the echo example whole: its descriptor, entry, worker app and the registry', () => {
    const paths = shownFiles(section).map((file) => file.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'examples/echo-benchmark/lib/src/echo-benchmark.ts',
        'examples/echo-benchmark/lib/src/echo-entry.ts',
        'examples/echo-benchmark/lib/package.json',
        'examples/echo-benchmark/worker/src/main.ts',
        'examples/echo-benchmark/worker/package.json',
        'examples/echo-benchmark/worker/bin/worker-echo.js',
        'libs/benchmarks/src/benchmark-entries.ts',
      ]),
    );
    // Every marker of the README is read: none is malformed or outside the section.
    expect(readme.match(/<!-- file: /g)).toHaveLength(paths.length);
  });

  it('shows each file as it is', () => {
    for (const { path, shown } of shownFiles(section)) {
      expect(existsSync(join(REPO_DIR, path)), path).toBe(true);
      expect(shown, `README's ${path} differs from the file: copy the file into README.md`).toBe(
        readFileSync(join(REPO_DIR, path), 'utf8'),
      );
    }
  });

  it('finds a block that differs from its file', () => {
    const [file] = shownFiles('<!-- file: a.ts -->\n```ts\nconst a = 1;\n```\n');
    expect(file).toEqual({ path: 'a.ts', shown: 'const a = 1;\n' });
    expect(file?.shown).not.toBe('const a = 2;\n');
  });
});
