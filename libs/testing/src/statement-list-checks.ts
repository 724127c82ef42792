import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CompiledQuery } from 'kysely';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import type { Database, SqlStatementList } from '@benchfleet/db';
import { recordingDatabase, sqlSnapshot, type RecordedStatement } from './statement-recorder.js';

// The checks of a package's SQL statement list (see SqlStatementList, @benchfleet/db), shared by
// libs/testing/src/sql-statements.test.ts and the test of a package no lib may import (the
// dashboard's): each entry's snapshot and EXPLAIN, and the sources a list must cover.

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

/** The `name` of a `defineQuery({ name: '…', … })` call, or `(unnamed query)`. */
function namedQueryName(call: ts.CallExpression): string {
  const [query] = call.arguments;
  const name =
    query &&
    ts.isObjectLiteralExpression(query) &&
    query.properties.find(
      (p): p is ts.PropertyAssignment =>
        ts.isPropertyAssignment(p) && ts.isIdentifier(p.name) && p.name.text === 'name',
    );
  return name && ts.isStringLiteral(name.initializer) ? name.initializer.text : '(unnamed query)';
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
    )
      found.push(namedQueryName(node));
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Every source under `dirs` a list must cover, with the file it is in (relative to `repoDir`). */
export function statementSourcesIn(repoDir: string, dirs: readonly string[]): Map<string, string> {
  const sources = new Map<string, string>();
  for (const dir of dirs)
    for (const file of sourcesUnder(dir))
      for (const found of statementSourcesOf(file)) sources.set(found, relative(repoDir, file));
  return sources;
}

/** The sources `lists` name: their entries' and the ones they declare not Kysely. */
function listedSources(lists: readonly SqlStatementList[]): Set<string> {
  return new Set(
    lists.flatMap((list) => [
      ...list.statements.map((entry) => entry.source),
      ...Object.keys(list.notKysely ?? {}),
    ]),
  );
}

/** Expects `lists` to cover every source found, and to name none that is not there. */
export function expectCovered(
  sources: ReadonlyMap<string, string>,
  lists: readonly SqlStatementList[],
): void {
  const listed = listedSources(lists);
  const unlisted = [...sources].filter(([source]) => !listed.has(source));
  expect(
    unlisted.map(([source, file]) => `${source} (${file})`),
    'add an entry to the statement list of its package',
  ).toEqual([]);
  expect(
    [...listed].filter((source) => !sources.has(source)),
    'listed, but no such method, builder or query',
  ).toEqual([]);
}

/** Has Postgres plan each statement (EXPLAIN runs nothing) on the migrated schema: a refusal throws. */
export async function explainEach(
  db: Database,
  recorded: readonly RecordedStatement[],
): Promise<void> {
  for (const statement of recorded)
    if (typeof statement !== 'string')
      await db.executeQuery(
        CompiledQuery.raw(`explain ${statement.sql}`, [...statement.parameters]),
      );
}

/**
 * One test per entry of `list` (its snapshot compared, each statement EXPLAINed on `db()`, a
 * migrated database) and one that its names and snapshot files match.
 */
export function describeStatementList(
  repoDir: string,
  list: SqlStatementList,
  db: () => Database,
): void {
  const where = relative(repoDir, fileURLToPath(list.snapshotDir));
  describe(where, () => {
    for (const entry of list.statements)
      it(`${entry.name} (${entry.source})`, async () => {
        const { db: recording, recorded } = recordingDatabase();
        await entry.run(recording);
        expect(recorded.length, 'the entry sent no statement').toBeGreaterThan(0);
        await expect(sqlSnapshot(recorded)).toMatchFileSnapshot(
          fileURLToPath(new URL(`${entry.name}.sql`, list.snapshotDir)),
        );
        await explainEach(db(), recorded);
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
