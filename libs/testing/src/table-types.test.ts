import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { workspacePackages } from '../../../workspace-apps.mjs';
import { useTestServices } from './test-services.js';

// The Kysely table types are written by hand beside the migrations: this test reads them with the
// TypeScript checker and holds each typed table to the migrated schema (columns, nullability, a
// rough type class), so that a migration and its types cannot drift apart unseen. Which types to
// read is derived: libs/db's `DB`, and every type a package passes to `db.withTables<T>()`.

const REPO_DIR = fileURLToPath(new URL('../../..', import.meta.url));
const services = useTestServices();

type Kind = 'text' | 'number' | 'boolean' | 'timestamp' | 'json' | 'bytes';
interface ColumnShape {
  readonly kind: Kind;
  /** null: not told by the type (an `unknown` json column). */
  readonly nullable: boolean | null;
}

/** The TypeScript files under `dir` (none when it does not exist). */
function sourceFilesUnder(dir: string): string[] {
  try {
    return readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
      .map((entry) => join(entry.parentPath, entry.name));
  } catch {
    return [];
  }
}

/** The files declaring table types, and the type's name in each. */
function tableTypeModules(): Array<{ file: string; name: string }> {
  const found = [{ file: join(REPO_DIR, 'libs/db/src/schema.ts'), name: 'DB' }];
  for (const pkg of workspacePackages()) {
    const files = sourceFilesUnder(join(pkg.dir, 'src')).filter((f) => !f.endsWith('.test.ts'));
    const names = new Set(
      files.flatMap((f) =>
        [...readFileSync(f, 'utf8').matchAll(/withTables<(\w+)>\(\)/g)].map((m) => m[1]!),
      ),
    );
    for (const name of names) {
      const file = files.find((f) =>
        new RegExp(`export (type|interface) ${name}\\b`).test(readFileSync(f, 'utf8')),
      );
      if (file) found.push({ file, name });
    }
  }
  return found;
}

function kindOf(type: ts.Type, checker: ts.TypeChecker): Kind {
  const flags = type.flags;
  if (flags & (ts.TypeFlags.StringLike | ts.TypeFlags.EnumLike)) return 'text';
  if (flags & ts.TypeFlags.NumberLike) return 'number';
  if (flags & ts.TypeFlags.BooleanLike) return 'boolean';
  const name = checker.typeToString(type);
  if (name === 'Date') return 'timestamp';
  if (/^(Buffer|Uint8Array)/.test(name)) return 'bytes';
  return 'json';
}

function shapeOf(column: ts.Type, checker: ts.TypeChecker): ColumnShape {
  // ColumnType<Select, Insert, Update> (Generated, JSONColumnType…): what a select reads.
  let read = column;
  // Nested too: Generated<Timestamp> is a ColumnType of a ColumnType.
  for (let select = read.getProperty('__select__'); select; select = read.getProperty('__select__'))
    read = checker.getTypeOfSymbol(select);
  if (read.flags & (ts.TypeFlags.Unknown | ts.TypeFlags.Any))
    return { kind: 'json', nullable: null };
  const parts = read.isUnion() ? read.types : [read];
  const nullish = ts.TypeFlags.Null | ts.TypeFlags.Undefined;
  const kinds = new Set(parts.filter((p) => !(p.flags & nullish)).map((p) => kindOf(p, checker)));
  expect(kinds.size, checker.typeToString(read)).toBe(1);
  return { kind: [...kinds][0]!, nullable: parts.some((p) => p.flags & ts.TypeFlags.Null) };
}

/** Each typed table's columns, by `table.column`, as the hand-written types say. */
function typedColumns(): Map<string, ColumnShape> {
  const modules = tableTypeModules();
  const config = ts.getParsedCommandLineOfConfigFile(
    join(REPO_DIR, 'tsconfig.base.json'),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined },
  );
  const program = ts.createProgram(
    modules.map((m) => m.file),
    { ...config?.options, noEmit: true },
  );
  const checker = program.getTypeChecker();
  const columns = new Map<string, ColumnShape>();
  for (const { file, name } of modules) {
    const source = program.getSourceFile(file);
    const moduleSymbol = source && checker.getSymbolAtLocation(source);
    const symbol =
      moduleSymbol && checker.getExportsOfModule(moduleSymbol).find((s) => s.name === name);
    if (!symbol) throw new Error(`${relative(REPO_DIR, file)} exports no ${name}`);
    for (const table of checker.getDeclaredTypeOfSymbol(symbol).getProperties())
      for (const column of checker.getTypeOfSymbol(table).getProperties())
        columns.set(
          `${table.name}.${column.name}`,
          shapeOf(checker.getTypeOfSymbol(column), checker),
        );
  }
  return columns;
}

const PG_KINDS: Record<string, Kind> = {
  text: 'text',
  'character varying': 'text',
  character: 'text',
  'USER-DEFINED': 'text',
  integer: 'number',
  bigint: 'number',
  smallint: 'number',
  'double precision': 'number',
  real: 'number',
  numeric: 'number',
  boolean: 'boolean',
  'timestamp with time zone': 'timestamp',
  'timestamp without time zone': 'timestamp',
  date: 'timestamp',
  json: 'json',
  jsonb: 'json',
  ARRAY: 'json',
  bytea: 'bytes',
};

describe('the hand-written table types', () => {
  it('match the migrated schema: every typed column exists, with its nullability and type class', async () => {
    const typed = typedColumns();
    const { rows } = await sql<{
      table_name: string;
      column_name: string;
      is_nullable: 'YES' | 'NO';
      data_type: string;
      table_type: string;
    }>`select c.table_name, c.column_name, c.is_nullable, c.data_type, t.table_type
       from information_schema.columns c
       join information_schema.tables t using (table_schema, table_name)
       where c.table_schema = current_schema()`.execute(services.db);
    const tables = new Set([...typed.keys()].map((key) => key.split('.')[0]));
    const inSchema = new Map(
      rows
        .filter((row) => tables.has(row.table_name))
        .map((row) => [
          `${row.table_name}.${row.column_name}`,
          {
            kind: PG_KINDS[row.data_type] ?? `(${row.data_type})`,
            // A view's columns are all nullable to information_schema: its types say better.
            nullable: row.table_type === 'VIEW' ? null : row.is_nullable === 'YES',
          },
        ]),
    );
    const drift: string[] = [];
    for (const [column, type] of typed) {
      const actual = inSchema.get(column);
      if (!actual) drift.push(`${column}: typed, not in the schema`);
      else if (actual.kind !== type.kind)
        drift.push(`${column}: typed ${type.kind}, is ${actual.kind}`);
      else if (
        actual.nullable !== null &&
        type.nullable !== null &&
        actual.nullable !== type.nullable
      )
        drift.push(
          `${column}: typed ${type.nullable ? '' : 'not '}null, is ${actual.nullable ? '' : 'not '}nullable`,
        );
    }
    for (const column of inSchema.keys())
      if (!typed.has(column)) drift.push(`${column}: in the schema, not typed`);
    expect(drift).toEqual([]);
    // Every table and view the migrations make has its types (the migrator's own tables aside).
    const untyped = new Set(
      rows
        .map((row) => row.table_name)
        .filter((table) => !tables.has(table) && !table.startsWith('benchfleet_migrations')),
    );
    expect([...untyped], 'tables and views without types').toEqual([]);
    // The check reads both kinds of table types, the shared ones and a benchmark's.
    expect([...tables]).toEqual(expect.arrayContaining(['tasks', 'task_scores', 'webshop_goals']));
  });
});
