import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';

export type FixtureCaseResult =
  { case: string; passed: true } | { case: string; passed: false; message: string };

export type FixtureRunContext = {
  /** Path of the fixture file being run. */
  filePath: string;
  /** Its folder, for fixtures that refer to sibling input files. */
  fixtureDir: string;
};

/**
 * Checks one kind of fixture file. `matches` looks at the parsed JSON's structure (never the file
 * name), so hidden fixture files of the same format are recognised too.
 */
export type FixtureRunner = {
  name: string;
  matches(json: unknown): boolean;
  run(
    json: unknown,
    context: FixtureRunContext,
  ): FixtureCaseResult[] | Promise<FixtureCaseResult[]>;
};

export type FixtureRunSummary = {
  passed: number;
  failed: { case: string; message: string }[];
  /** Names of the runners that recognised the file. */
  runners: string[];
};

/** Runs every runner that recognises `json`; a file nobody recognises is one failed case. */
async function runFixtureJson(
  json: unknown,
  context: FixtureRunContext,
  runners: readonly FixtureRunner[],
): Promise<FixtureRunSummary> {
  const summary: FixtureRunSummary = { passed: 0, failed: [], runners: [] };
  for (const runner of runners) {
    if (!runner.matches(json)) continue;
    summary.runners.push(runner.name);
    let results: FixtureCaseResult[];
    try {
      results = await runner.run(json, context);
    } catch (error) {
      results = [
        {
          case: runner.name,
          passed: false,
          message: `runner crashed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
        },
      ];
    }
    for (const result of results) {
      if (result.passed) summary.passed += 1;
      else summary.failed.push({ case: result.case, message: result.message });
    }
  }
  if (summary.runners.length === 0) {
    summary.failed.push({
      case: context.filePath,
      message: `no fixture runner recognises this file (known: ${runners.map((runner) => runner.name).join(', ')})`,
    });
  }
  return summary;
}

/** Reads a fixture file and runs it through `runners` (see runFixtureJson). */
export async function runFixtureFile(
  filePath: string,
  runners: readonly FixtureRunner[],
): Promise<FixtureRunSummary> {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(filePath, 'utf8')) as unknown;
  } catch (error) {
    return {
      passed: 0,
      failed: [
        {
          case: filePath,
          message: `cannot read fixture: ${error instanceof Error ? error.message : String(error)}`,
        },
      ],
      runners: [],
    };
  }
  return runFixtureJson(json, { filePath, fixtureDir: dirname(filePath) }, runners);
}

/** Case helper: passes when the two values serialise to the same JSON (key order included). */
export function expectSameJson(
  caseName: string,
  actual: unknown,
  expected: unknown,
): FixtureCaseResult {
  const actualJson = JSON.stringify(actual);
  const expectedJson = JSON.stringify(expected);
  if (actualJson === expectedJson) return { case: caseName, passed: true };
  return { case: caseName, passed: false, message: `expected ${expectedJson}, got ${actualJson}` };
}

/** checkCase for checks that wait (a store episode fetching products). */
export async function checkCaseAsync(
  caseName: string,
  check: () => Promise<FixtureCaseResult>,
): Promise<FixtureCaseResult> {
  try {
    return await check();
  } catch (error) {
    return {
      case: caseName,
      passed: false,
      message: error instanceof Error ? error.message : String(error),
    };
  }
}

/** Case helper: runs `check`, turning a thrown error into a failed case. */
export function checkCase(caseName: string, check: () => FixtureCaseResult): FixtureCaseResult {
  try {
    return check();
  } catch (error) {
    return {
      case: caseName,
      passed: false,
      message: error instanceof Error ? error.message : String(error),
    };
  }
}
