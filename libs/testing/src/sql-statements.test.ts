import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CompiledQuery } from 'kysely';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { benchmarks } from '@benchfleet/benchmarks';
import { dbSqlStatements, type SqlStatementList } from '@benchfleet/db';
import { benchmarkPackages } from '../../../benchmark-entries.mjs';
import { recordingDatabase, sqlSnapshot, type RecordedStatement } from './statement-recorder.js';
import { useTestServices } from './test-services.js';

// The SQL of every statement the repositories build, from one list per package (libs/db's, and
// each registered benchmark's `sqlStatements`): each entry is run with its example arguments on a
// database that records what it is sent, its SQL compared with `__snapshots__/<name>.sql` beside
// the list, and each statement EXPLAINed by Postgres on the migrated schema (a statement Postgres
// would refuse fails here, not in a worker). Coverage is read from the sources, not kept by hand:
// every public method of an exported `…Repository` class, every exported `…Statement` builder and
// every named query (`defineQuery`) in libs/db or a benchmark package must be some entry's source.
// After a deliberate change: `npx vitest run libs/testing/src/sql-statements.test.ts -u`.

const REPO_DIR = fileURLToPath(new URL('../../..', import.meta.url));
const services = useTestServices();

const lists: SqlStatementList[] = [dbSqlStatements];
for (const benchmark of benchmarks.all)
  if (benchmark.sqlStatements) lists.push(await benchmark.sqlStatements());

/** The TypeScript sources under `dir`, tests and snapshots left out. */
function sourcesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter(
      (entry) =>
        entry.isFile() &&
        entry.name.endsWith('.ts') &&
        !entry.name.endsWith('.test.ts') &&
        !entry.name.endsWith('.d.ts'),
    )
    .map((entry) => join(entry.parentPath, entry.name));
}

function isExported(node: ts.Node): boolean {
  return (
    ts.canHaveModifiers(node) &&
    (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword)
  );
}

function isPublicMethod(member: ts.ClassElement): member is ts.MethodDeclaration {
  if (!ts.isMethodDeclaration(member) || !ts.isIdentifier(member.name)) return false;
  const hidden = [ts.SyntaxKind.PrivateKeyword, ts.SyntaxKind.ProtectedKeyword];
  return !(ts.getModifiers(member) ?? []).some((m) => hidden.includes(m.kind));
}

/** What in `file` builds SQL a list must cover: repository methods, statement builders, named queries. */
function statementSourcesOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isClassDeclaration(node) && isExported(node) && node.name?.text.endsWith('Repository'))
      for (const member of node.members.filter(isPublicMethod))
        found.push(`${node.name.text}.${(member.name as ts.Identifier).text}`);
    if (ts.isFunctionDeclaration(node) && isExported(node) && node.name?.text.endsWith('Statement'))
      found.push(node.name.text);
    if (
      ts.isCallExpression(node) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === 'defineQuery'
    ) {
      const [query] = node.arguments;
      const name =
        query &&
        ts.isObjectLiteralExpression(query) &&
        query.properties.find(
          (p): p is ts.PropertyAssignment =>
            ts.isPropertyAssignment(p) && ts.isIdentifier(p.name) && p.name.text === 'name',
        );
      found.push(
        name && ts.isStringLiteral(name.initializer) ? name.initializer.text : '(unnamed query)',
      );
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Every source that must be listed, with the file it is in: libs/db and every benchmark package. */
function statementSources(): Map<string, string> {
  const dirs = [
    join(REPO_DIR, 'libs/db/src'),
    ...benchmarkPackages(REPO_DIR).map((pkg) => join(pkg.dir, 'src')),
  ];
  const sources = new Map<string, string>();
  for (const dir of dirs)
    for (const file of sourcesUnder(dir))
      for (const found of statementSourcesOf(file)) sources.set(found, relative(REPO_DIR, file));
  return sources;
}

/** Has Postgres plan each statement (EXPLAIN runs nothing) on the migrated schema: a refusal throws. */
async function explainEach(recorded: readonly RecordedStatement[]): Promise<void> {
  for (const statement of recorded)
    if (typeof statement !== 'string')
      await services.db.executeQuery(
        CompiledQuery.raw(`explain ${statement.sql}`, [...statement.parameters]),
      );
}

describe('the SQL of every listed statement', () => {
  it('is refused when Postgres would refuse it (a column the schema does not have)', async () => {
    const { db, recorded } = recordingDatabase();
    await db.selectFrom('runs').select('id').where('id', '=', 'run-1').execute();
    await explainEach(recorded);
    const wrong = CompiledQuery.raw('select no_such_column from runs where id = $1', ['run-1']);
    await expect(explainEach([wrong])).rejects.toThrow(/no_such_column/);
  });

  for (const list of lists) {
    const where = relative(REPO_DIR, fileURLToPath(list.snapshotDir));
    describe(where, () => {
      for (const entry of list.statements)
        it(`${entry.name} (${entry.source})`, async () => {
          const { db, recorded } = recordingDatabase();
          await entry.run(db);
          expect(recorded.length, 'the entry sent no statement').toBeGreaterThan(0);
          await expect(sqlSnapshot(recorded)).toMatchFileSnapshot(
            fileURLToPath(new URL(`${entry.name}.sql`, list.snapshotDir)),
          );
          await explainEach(recorded);
        });

      it('has one entry per snapshot file, and none without its file', () => {
        const names = list.statements.map((entry) => entry.name);
        expect(
          names.filter((name, i) => names.indexOf(name) !== i),
          'names used twice',
        ).toEqual([]);
        // None yet: the first run writes them when the file's tests end.
        if (!existsSync(list.snapshotDir)) return;
        const files = readdirSync(list.snapshotDir)
          .filter((file) => file.endsWith('.sql'))
          .map((file) => file.slice(0, -'.sql'.length));
        expect(
          files.filter((file) => !names.includes(file)),
          `snapshots no entry writes (delete them from ${where})`,
        ).toEqual([]);
      });
    });
  }
});

describe('the statement lists', () => {
  it('cover every repository method, statement builder and named query of libs/db and the benchmark packages', () => {
    const sources = statementSources();
    const listed = new Set(
      lists.flatMap((list) => [
        ...list.statements.map((entry) => entry.source),
        ...Object.keys(list.notKysely ?? {}),
      ]),
    );
    const unlisted = [...sources].filter(([source]) => !listed.has(source));
    expect(
      unlisted.map(([source, file]) => `${source} (${file})`),
      'add an entry to the statement list of its package',
    ).toEqual([]);
    expect(
      [...listed].filter((source) => !sources.has(source)),
      'listed, but no such method, builder or query',
    ).toEqual([]);
    // The scan finds each kind it looks for, in the core and in a benchmark.
    expect([...sources.keys()]).toEqual(
      expect.arrayContaining([
        'RunsRepository.get',
        'settleStatement',
        'WebshopCatalogRepository.get',
      ]),
    );
  });
});
