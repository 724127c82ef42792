import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { benchmarks } from '@benchfleet/benchmarks';
import { RunsRepository, type Database } from '@benchfleet/db';
import { createRedisConnection } from '@benchfleet/queue';
import {
  createTestDatabase,
  osworldTestTask,
  runCli,
  useTestServices,
  withDatabase,
  writeOsworldTestDataset,
  type CliName,
  type CliResult,
  type TestDatabase,
} from '@benchfleet/testing';
import {
  demoCatalogRequest,
  importWebshopCatalog,
  type WebshopTables,
} from '@benchfleet/webshop-benchmark';

// Every bad input a user can give, each refused at the edge: exit code 2, one line on stderr that
// names the flag (or the thing) and says what is wanted, no stack, no driver or schema dump, and
// nothing written: no run or task row, no Redis key, no file.

const services = useTestServices();
const benchmarkNames = benchmarks.all.map((benchmark) => benchmark.name);
let scratch: string;
let datasets: Record<
  'colon' | 'duplicate' | 'traversal' | 'absolute' | 'dots' | 'caseTwins' | 'slashTwins',
  string
>;
let emptyDatabaseUrl: string;
const emptyDatabase = `bf_empty_${process.pid}`;
// Runs to point commands at, in a database of their own (this file's must stay without runs).
let runsDatabase: TestDatabase;
const missingDatabase = `bf_missing_${process.pid}`;
const EXISTING_FILE_TEXT = 'a file the user keeps\n';
const inRunsDatabase = () => ({ ...services.env, DATABASE_URL: runsDatabase.url });
const otherUrl = (url: string, change: (parsed: URL) => void): string => {
  const parsed = new URL(url);
  change(parsed);
  return parsed.toString();
};

interface Case {
  name: string;
  cli?: CliName;
  args: () => string[];
  /** What the one line must say: the flag or thing named, and the fix. */
  says: RegExp;
  env?: () => NodeJS.ProcessEnv;
  code?: number;
}

const webshopLlm = ['enqueue', '--benchmark', 'webshop', '--agent', 'llm', '--llm-model', 'm'];

const cases: Case[] = [
  // The issue's list, each as a user typed it.
  {
    name: 'import --products -1',
    args: () => ['webshop', 'import', '--demo', '--products', '-1'],
    says: /--products <n>' argument '-1' is invalid\. expected a positive whole number/,
  },
  {
    name: 'import --products abc',
    args: () => ['webshop', 'import', '--demo', '--products', 'abc'],
    says: /--products <n>' argument 'abc' is invalid/,
  },
  {
    name: 'enqueue --max-tasks -5',
    args: () => ['enqueue', '--benchmark', 'webshop', '--max-tasks', '-5'],
    says: /--max-tasks <n>' argument '-5' is invalid\. expected a positive whole number/,
  },
  {
    name: 'enqueue --max-steps -1',
    args: () => ['enqueue', '--benchmark', 'webshop', '--max-steps', '-1'],
    says: /--max-steps <n>' argument '-1' is invalid/,
  },
  {
    name: 'enqueue --stall-timeout-s -10',
    args: () => ['enqueue', '--benchmark', 'osworld', '--stall-timeout-s', '-10'],
    says: /--stall-timeout-s -10: expected a positive whole number/,
  },
  {
    name: 'runs --limit abc',
    args: () => ['runs', '--limit', 'abc'],
    says: /--limit <n>' argument 'abc' is invalid\. expected a positive whole number/,
  },
  {
    name: 'enqueue --llm-temperature abc',
    args: () => [
      ...webshopLlm,
      '--llm-base-url',
      'http://127.0.0.1:9/v1',
      '--llm-temperature',
      'abc',
    ],
    says: /--llm-temperature abc: expected a number from 0 to 2/,
  },
  {
    name: 'enqueue --model [1,2]',
    args: () => ['enqueue', '--benchmark', 'osworld', '--model', '[1,2]'],
    says: /--model \[1,2\]: expected a JSON object; expected '\{"provider"/,
  },
  {
    name: 'a task id with ":"',
    args: () => ['enqueue', '--dataset', datasets.colon],
    says: /task id "os:1" in the osworld tasks is not allowed: use letters, digits, \. _ -/,
  },
  {
    name: 'a task id twice',
    args: () => ['enqueue', '--dataset', datasets.duplicate],
    says: /task id os-1 appears twice in the osworld tasks: every task needs its own id/,
  },
  // Once: a prefix without braces was taken, and its keys could not all be found to remove.
  {
    name: 'a queue prefix without braces',
    args: () => ['runs'],
    env: () => ({ ...services.env, BENCHFLEET_QUEUE_PREFIX: 'bench' }),
    says: /BENCHFLEET_QUEUE_PREFIX: must be a name in braces, e\.g\. \{benchfleet\}/,
  },
  {
    name: 'worker-webshop with a queue prefix without braces',
    cli: 'worker-webshop',
    args: () => [],
    env: () => ({ ...services.env, BENCHFLEET_QUEUE_PREFIX: 'bench:x' }),
    says: /BENCHFLEET_QUEUE_PREFIX: must be a name in braces, e\.g\. \{benchfleet\}/,
  },
  // Once: it started on an unmigrated database and showed "0 of 0 runs" while its API failed.
  {
    name: 'the dashboard on an unmigrated database',
    cli: 'dashboard',
    args: () => ['--port', '0'],
    env: () => ({ ...services.env, DATABASE_URL: emptyDatabaseUrl }),
    says: /the database at DATABASE_URL has no benchfleet schema yet: run `scheduler migrate` first/,
  },
  {
    name: 'an unmigrated database',
    args: () => ['runs'],
    env: () => ({ ...services.env, DATABASE_URL: emptyDatabaseUrl }),
    says: /the database at DATABASE_URL has no benchfleet schema yet: run `scheduler migrate` first/,
  },
  {
    name: '--goals beyond the catalog',
    args: () => ['enqueue', '--benchmark', 'webshop', '--goals', '0-99999'],
    says: /--goals 0-99999: catalog demo has goals 0-\d+ only/,
  },
  {
    name: '--goals far beyond the catalog',
    args: () => ['enqueue', '--benchmark', 'webshop', '--goals', '0-300000000'],
    says: /--goals 0-300000000: catalog demo has goals 0-\d+ only/,
  },
  {
    name: 'a task id "../../x"',
    args: () => ['enqueue', '--dataset', datasets.traversal],
    says: /task id "\.\.\/\.\.\/x" .* is not allowed/,
  },
  {
    name: 'a task id "/etc/passwd"',
    args: () => ['enqueue', '--dataset', datasets.absolute],
    says: /task id "\/etc\/passwd" .* is not allowed/,
  },
  {
    name: 'a task id ".."',
    args: () => ['enqueue', '--dataset', datasets.dots],
    says: /task id "\.\." .* is not allowed/,
  },
  {
    name: 'task ids "a/b" and "a_b"',
    args: () => ['enqueue', '--dataset', datasets.slashTwins],
    says: /task id "a\/b" .* is not allowed/,
  },
  {
    name: 'task ids differing in case',
    args: () => ['enqueue', '--dataset', datasets.caseTwins],
    says: /task ids Task-1 and task-1 .* differ only in case/,
  },
  // More of the same kind, across every command.
  {
    name: 'enqueue --benchmark nope',
    args: () => ['enqueue', '--benchmark', 'nope'],
    // The registry's benchmarks, read from it: adding one changes no test.
    says: new RegExp(
      `--benchmark <name>' argument 'nope' is invalid\\. Allowed choices are ${benchmarkNames.join(', ')}\\.`,
    ),
  },
  {
    name: 'enqueue with nothing',
    args: () => ['enqueue'],
    says: new RegExp(
      `say which benchmark to run: --benchmark ${benchmarkNames.join('\\|')}, or --domain D`,
    ),
  },
  {
    name: 'enqueue --domain nope',
    args: () => ['enqueue', '--domain', 'nope'],
    says: /unknown domain 'nope'; valid: OSWorld \(Bytebot\): chrome.*WebShop \(catalog demo\): /,
  },
  {
    name: 'enqueue --split nope',
    args: () => ['enqueue', '--benchmark', 'webshop', '--split', 'nope'],
    says: /--split nope: expected one of test, eval, train/,
  },
  {
    name: 'enqueue --agent nope',
    args: () => ['enqueue', '--benchmark', 'webshop', '--agent', 'nope'],
    says: /--agent nope: expected one of rule, llm/,
  },
  {
    name: 'llm agent without its endpoint',
    args: () => ['enqueue', '--benchmark', 'webshop', '--agent', 'llm'],
    says: /--agent llm needs --llm-base-url URL .* and --llm-model NAME/,
  },
  {
    name: '--llm-base-url not a URL',
    args: () => [...webshopLlm, '--llm-base-url', 'not a url'],
    says: /--llm-base-url not a url: expected an http\(s\) URL/,
  },
  {
    name: '--llm-base-url with credentials',
    args: () => [...webshopLlm, '--llm-base-url', 'http://user:hunter2@127.0.0.1:9/v1'],
    says: /--llm-base-url must not carry credentials: put the key in LLM_API_KEY/,
  },
  {
    name: 'an LLM endpoint nobody answers',
    args: () => [...webshopLlm, '--llm-base-url', 'http://127.0.0.1:9/v1'],
    says: /--llm-base-url http:\/\/127\.0\.0\.1:9\/v1: the endpoint cannot be reached .* --no-llm-check/,
  },
  {
    name: 'llm flags without the llm agent',
    args: () => ['enqueue', '--benchmark', 'webshop', '--llm-model', 'm'],
    says: /--llm-model is for the llm agent: add --agent llm, or drop it/,
  },
  {
    name: 'enqueue --catalog nope',
    args: () => ['enqueue', '--benchmark', 'webshop', '--catalog', 'nope'],
    says: /--catalog nope not found; imported catalogs: demo/,
  },
  {
    name: 'enqueue --observation-mode nope',
    args: () => ['enqueue', '--benchmark', 'webshop', '--observation-mode', 'nope'],
    says: /--observation-mode nope: expected one of text, text_rich/,
  },
  {
    name: '--split and --goals together',
    args: () => ['enqueue', '--split', 'test', '--goals', '0-3'],
    says: /--split and --goals both choose goals: give one of them/,
  },
  {
    name: 'enqueue --goals abc',
    args: () => ['enqueue', '--goals', 'abc'],
    says: /--goals abc: "abc" is not a goal index or a range; expected e\.g\. 0-499/,
  },
  {
    name: 'enqueue --goals 5-3',
    args: () => ['enqueue', '--goals', '5-3'],
    says: /--goals 5-3: range "5-3" ends before it starts/,
  },
  {
    name: 'enqueue --dataset missing',
    args: () => ['enqueue', '--dataset', path.join(scratch, 'missing.json')],
    says: /missing\.json: no such file or directory/,
  },
  {
    name: '--model missing fields',
    args: () => ['enqueue', '--benchmark', 'osworld', '--model', '{"provider":"a"}'],
    says: /--model \{"provider":"a"\}: missing field "name"; missing field "title"/,
  },
  {
    name: 'flags of two benchmarks',
    args: () => ['enqueue', '--dataset', datasets.colon, '--split', 'test'],
    says: /--dataset is a osworld flag and --split a webshop flag: a run is of one benchmark/,
  },
  {
    name: 'enqueue --max-tasks 0',
    args: () => ['enqueue', '--benchmark', 'webshop', '--max-tasks', '0'],
    says: /--max-tasks <n>' argument '0' is invalid\. expected a positive whole number/,
  },
  {
    name: 'an unknown flag',
    args: () => ['enqueue', '--frobnicate'],
    says: /unknown option '--frobnicate'; `scheduler --help` lists what it takes/,
  },
  {
    name: 'an unknown command',
    args: () => ['frobnicate'],
    says: /unknown command 'frobnicate'; `scheduler --help` lists what it takes/,
  },
  {
    name: 'status of an unknown run',
    args: () => ['status', 'run-nope'],
    says: /run run-nope not found; `scheduler runs` lists the runs/,
  },
  {
    name: 'cancel of an unknown run',
    args: () => ['cancel', 'run-nope'],
    says: /run run-nope not found; `scheduler runs` lists the runs/,
  },
  {
    name: 'resume of an unknown run',
    args: () => ['resume', 'run-nope'],
    says: /run run-nope not found; `scheduler runs` lists the runs/,
  },
  {
    name: 'retry --status broken',
    args: () => ['retry', 'run-nope', '--status', 'broken'],
    says: /--status broken: expected one of queued, running, success/,
  },
  {
    name: 'aggregate of an unknown run',
    args: () => ['aggregate', 'run-nope'],
    says: /run run-nope not found/,
  },
  {
    name: 'export of an unknown run',
    args: () => ['export', 'run-nope', '--out', path.join(scratch, 'out-unknown')],
    says: /run run-nope not found/,
  },
  {
    name: 'import with no source',
    args: () => ['webshop', 'import'],
    says: /give --items FILE and --attributes FILE .*, or --demo/,
  },
  {
    name: 'import --demo with files',
    args: () => ['webshop', 'import', '--demo', '--items', 'x.json'],
    says: /--demo generates its own files: drop --items/,
  },
  {
    name: 'import of missing files',
    args: () => [
      'webshop',
      'import',
      '--items',
      path.join(scratch, 'no-items.json'),
      '--attributes',
      path.join(scratch, 'no-attrs.json'),
    ],
    says: /no-attrs\.json: cannot read file: ENOENT/,
  },
  {
    name: 'import --goal-mode bogus',
    args: () => ['webshop', 'import', '--demo', '--goal-mode', 'bogus'],
    says: /--goal-mode <mode>' argument 'bogus' is invalid\. Allowed choices are human, synthetic/,
  },
  {
    name: 'import --seed -1',
    args: () => ['webshop', 'import', '--demo', '--seed', '-1'],
    says: /--seed <n>' argument '-1' is invalid\. expected a whole number, 0 or more/,
  },
  {
    name: 'serve --port 70000',
    args: () => ['webshop', 'serve', '--port', '70000'],
    says: /--port <port>' argument '70000' is invalid\. expected a port from 0 to 65535/,
  },
  {
    name: 'serve --catalog nope',
    args: () => ['webshop', 'serve', '--catalog', 'nope', '--port', '0'],
    says: /--catalog nope not found; imported catalogs: demo/,
  },
  {
    name: 'verify without fixtures',
    args: () => ['webshop', 'verify'],
    says: /required option '--fixtures <files\.\.\.>' not specified/,
  },
  {
    name: 'extract without a directory',
    args: () => ['osworld', 'extract'],
    says: /required option '--osworld-dir <dir>' not specified/,
  },
  {
    name: 'extract from a missing directory',
    args: () => [
      'osworld',
      'extract',
      '--osworld-dir',
      path.join(scratch, 'no-osworld'),
      '--output',
      path.join(scratch, 'out.json'),
    ],
    says: /no-osworld: not an OSWorld directory/,
  },
  {
    name: 'demo --episodes 0',
    args: () => ['demo', '--episodes', '0'],
    says: /--episodes <n>' argument '0' is invalid/,
  },
  {
    name: 'worker --grace-s abc',
    args: () => ['worker', '--grace-s', 'abc'],
    says: /--grace-s \(or BENCHFLEET_GRACE_S\): expected a whole number of seconds/,
  },
  {
    name: 'worker --metrics-port 99999',
    args: () => ['worker', '--metrics-port', '99999'],
    says: /--metrics-port \(or BENCHFLEET_METRICS_PORT\): expected a port from 0 to 65535/,
  },
  {
    name: 'worker-webshop --concurrency 0',
    cli: 'worker-webshop',
    args: () => ['--concurrency', '0'],
    says: /--concurrency \(or BENCHFLEET_CONCURRENCY\): expected a whole number from 1 to 1024/,
  },
  {
    name: 'worker-webshop --concurrency abc',
    cli: 'worker-webshop',
    args: () => ['--concurrency', 'abc'],
    says: /--concurrency \(or BENCHFLEET_CONCURRENCY\): expected a whole number from 1 to 1024/,
  },
  {
    name: 'worker-webshop --price-table missing',
    cli: 'worker-webshop',
    args: () => ['--price-table', path.join(scratch, 'no-prices.json')],
    says: /--price-table .*no-prices\.json: no such file; give a JSON file or inline JSON/,
  },
  {
    name: 'worker-webshop --price-table negative',
    cli: 'worker-webshop',
    args: () => ['--price-table', '{"m":{"inputUsdPerMillion":-1,"outputUsdPerMillion":1}}'],
    says: /--price-table \(or LLM_PRICE_TABLE\): .*(greater than or equal to 0|>=0)/,
  },
  {
    name: 'worker-webshop --llm-rpm 0',
    cli: 'worker-webshop',
    args: () => ['--llm-rpm', '0'],
    says: /--llm-rpm \(or LLM_RPM\): expected a whole number, 1 or more/,
  },
  {
    name: 'worker-webshop --llm-window hourly',
    cli: 'worker-webshop',
    args: () => ['--llm-window', 'hourly'],
    says: /--llm-window \(or LLM_WINDOW\): expected one of sliding, fixed, bucket/,
  },
  {
    name: 'worker-webshop --llm-limits missing',
    cli: 'worker-webshop',
    args: () => ['--llm-limits', path.join(scratch, 'no-limits.yaml')],
    says: /--llm-limits .*no-limits\.yaml: no such file \(give a YAML or JSON file with a 'limits:' list\)/,
  },
  {
    name: 'worker-webshop --llm-limits with a bad entry',
    cli: 'worker-webshop',
    args: () => ['--llm-limits', path.join(scratch, 'bad-limits.yaml')],
    says: /--llm-limits \(or LLM_LIMITS\): limits\.0\.requestsPerMinute: /,
  },
  {
    name: 'worker-osworld without a stack',
    cli: 'worker-osworld',
    args: () => [],
    env: () => ({ ...services.env, BYTEBOT_URL: '' }),
    says: /--bytebot-url \(or BYTEBOT_URL\): /,
  },
  {
    name: 'worker-webshop with OTEL_EXPORTER_OTLP_ENDPOINT not a URL',
    cli: 'worker-webshop',
    args: () => [],
    env: () => ({ ...services.env, OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }),
    says: /OTEL_EXPORTER_OTLP_ENDPOINT: must be an http:\/\/ or https:\/\/ URL \(e\.g\. http:\/\/127\.0\.0\.1:4318\)/,
  },
  {
    name: 'worker (the keeper) with OTEL_BSP_SCHEDULE_DELAY=-5',
    args: () => ['worker'],
    env: () => ({
      ...services.env,
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
      OTEL_BSP_SCHEDULE_DELAY: '-5',
    }),
    says: /OTEL_BSP_SCHEDULE_DELAY: must be a whole number above 0/,
  },
  {
    name: 'enqueue with OTEL_EXPORTER_OTLP_PROTOCOL=grpc',
    args: () => ['enqueue', '--benchmark', 'webshop', '--split', 'test', '--max-tasks', '1'],
    env: () => ({
      ...services.env,
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
    }),
    says: /OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' is not supported; use http\/protobuf \(the default\) or http\/json/,
  },
  {
    name: 'worker-osworld --bytebot-url ftp',
    cli: 'worker-osworld',
    args: () => ['--bytebot-url', 'ftp://x'],
    says: /--bytebot-url \(or BYTEBOT_URL\): must be an http\(s\) URL/,
  },
  {
    name: 'worker-osworld --stack-id with spaces',
    cli: 'worker-osworld',
    args: () => ['--bytebot-url', 'http://127.0.0.1:9', '--stack-id', 'my stack'],
    says: /--stack-id \(or BENCHFLEET_STACK_ID\): use letters, digits, _ \. - only/,
  },
  // Issue 19's list: outputs, comparisons, services and downloads.
  {
    name: 'aggregate --out into a missing directory',
    args: () => ['aggregate', 'run-a', '--out', path.join(scratch, 'no-dir', 'final.json')],
    env: inRunsDatabase,
    says: /--out \S+no-dir\/final\.json: directory \S+no-dir does not exist; create it first \(mkdir -p \S+no-dir\) or give another path/,
  },
  {
    name: 'aggregate --markdown into a missing directory',
    args: () => ['aggregate', 'run-a', '--markdown', path.join(scratch, 'no-dir', 'report.md')],
    env: inRunsDatabase,
    says: /--markdown \S+no-dir\/report\.md: directory \S+no-dir does not exist/,
  },
  {
    name: 'aggregate --out onto a directory',
    args: () => ['aggregate', 'run-a', '--out', scratch],
    env: inRunsDatabase,
    says: /--out \S+: is a directory; give the path of a file to write/,
  },
  {
    name: 'aggregate --out and --markdown naming one file',
    args: () => [
      'aggregate',
      'run-a',
      '--out',
      path.join(scratch, 'same.txt'),
      '--markdown',
      path.join(scratch, 'same.txt'),
    ],
    env: inRunsDatabase,
    says: /--out and --markdown both name \S+same\.txt: give the JSON and the report a file each/,
  },
  {
    name: 'export --out under /proc',
    args: () => ['export', 'run-a', '--out', '/proc/benchfleet-export'],
    env: inRunsDatabase,
    says: /--out \/proc\/benchfleet-export: cannot create a directory in \/proc \(ENOENT\); give a path in a directory you may write to/,
  },
  {
    name: 'export --out onto an existing regular file',
    args: () => ['export', 'run-a', '--out', path.join(scratch, 'existing.txt')],
    env: inRunsDatabase,
    says: /--out \S+existing\.txt: is a file, not a directory; give a directory to write/,
  },
  {
    name: 'export --out below a regular file',
    args: () => ['export', 'run-a', '--out', path.join(scratch, 'existing.txt', 'logs')],
    env: inRunsDatabase,
    says: /--out \S+existing\.txt\/logs: \S+existing\.txt is not a directory; give another path/,
  },
  {
    name: 'export --out onto a directory of other files',
    args: () => ['export', 'run-a', '--out', path.join(scratch, 'kept')],
    env: inRunsDatabase,
    says: /--out \S+kept: the directory holds files that are not an earlier export \(no trajectories\.jsonl\), and an export replaces its --out; give a new or empty directory/,
  },
  {
    name: 'osworld extract --output into a missing directory',
    args: () => [
      'osworld',
      'extract',
      '--osworld-dir',
      path.join(scratch, 'no-osworld'),
      '--output',
      path.join(scratch, 'no-dir', 'dataset.json'),
    ],
    says: /--output \S+no-dir\/dataset\.json: directory \S+no-dir does not exist/,
  },
  {
    name: 'compare of two runs with no task in common',
    args: () => ['compare', 'run-a', 'run-b'],
    env: inRunsDatabase,
    says: /runs run-a \(2 tasks\) and run-b \(1 tasks\) have no task in common: compare two runs over the same tasks/,
  },
  {
    name: 'compare of runs whose common tasks have not settled',
    args: () => ['compare', 'run-a', 'run-c', '--json'],
    env: inRunsDatabase,
    says: /runs run-a and run-c share 1 task\(s\), but none has settled in both yet/,
  },
  {
    name: 'compare of runs of two benchmarks',
    args: () => ['compare', 'run-a', 'run-os'],
    env: inRunsDatabase,
    says: /runs run-a \(webshop\) and run-os \(osworld\) are of different benchmarks/,
  },
  {
    name: 'compare of a run with itself',
    args: () => ['compare', 'run-a', 'run-a'],
    says: /RUN_A and RUN_B are both run-a: compare two different runs/,
  },
  {
    name: 'a database that does not exist',
    args: () => ['runs'],
    env: () => ({
      ...services.env,
      DATABASE_URL: withDatabase(services.databaseUrl, missingDatabase),
    }),
    says: new RegExp(
      `DATABASE_URL: Postgres at \\S+ answers, but has no database "${missingDatabase}": create it \\(createdb -h \\S+ -p \\d+ -U \\S+ ${missingDatabase}\\), then run \`scheduler migrate\``,
    ),
  },
  {
    name: 'a Postgres user that does not exist',
    args: () => ['runs'],
    env: () => ({
      ...services.env,
      DATABASE_URL: otherUrl(services.databaseUrl, (url) => (url.username = 'bf_no_such_role')),
    }),
    says: /DATABASE_URL: Postgres at \S+ refused the login \(.*bf_no_such_role.*\): fix the user or password in the URL/,
  },
  {
    name: 'a Redis database index the server does not have',
    args: () => ['status'],
    env: () => ({
      ...services.env,
      REDIS_URL: otherUrl(services.redisUrl, (url) => (url.pathname = '/99')),
    }),
    says: /REDIS_URL: Redis at \S+\/99 answers, but has no database 99/,
  },
  {
    name: 'webshop download with no network',
    args: () => [
      'webshop',
      'download',
      '--dir',
      path.join(scratch, 'downloads'),
      '--base-url',
      'http://benchfleet-no-such-host.invalid',
    ],
    says: /--base-url http:\/\/benchfleet-no-such-host\.invalid: cannot fetch items_shuffle_1000\.json \(the host benchfleet-no-such-host\.invalid cannot be resolved \((ENOTFOUND|EAI_AGAIN)\): this machine has no network or no DNS for it\); point --base-url .* or import files you have with `scheduler webshop import/,
  },
  {
    name: 'dashboard --frobnicate',
    cli: 'dashboard',
    args: () => ['--frobnicate'],
    says: /unknown option '--frobnicate'; `dashboard --help` lists what it takes/,
  },
  {
    name: 'dashboard over a database that does not exist',
    cli: 'dashboard',
    args: () => ['--port', '0'],
    env: () => ({
      ...services.env,
      DATABASE_URL: withDatabase(services.databaseUrl, missingDatabase),
    }),
    says: new RegExp(
      `DATABASE_URL: Postgres at \\S+ answers, but has no database "${missingDatabase}"`,
    ),
  },
  {
    name: 'worker-osworld --grace-s -1',
    cli: 'worker-osworld',
    args: () => ['--bytebot-url', 'http://127.0.0.1:9', '--grace-s', '-1'],
    says: /--grace-s \(or BENCHFLEET_GRACE_S\): expected a whole number of seconds, 0 or more/,
  },
];

async function pooled<T, R>(
  items: readonly T[],
  width: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index]!);
      }
    }),
  );
  return results;
}

async function redisKeys(): Promise<string[]> {
  const redis = createRedisConnection(services.redisUrl, 'producer');
  try {
    return await redis.keys(`${services.prefix.replace(/[{}[\]*?]/g, (c) => `\\${c}`)}:*`);
  } finally {
    redis.disconnect();
  }
}

let results: CliResult[];

beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'bad-input-'));
  await importWebshopCatalog(services.db, demoCatalogRequest({ seed: 0, products: 200 }));
  const one = (ids: string[]) => ids.map((id) => osworldTestTask(id, `task ${id}`));
  datasets = {
    colon: await writeOsworldTestDataset(scratch, 'colon', one(['os-0', 'os:1'])),
    duplicate: await writeOsworldTestDataset(scratch, 'duplicate', one(['os-1', 'os-1'])),
    traversal: await writeOsworldTestDataset(scratch, 'traversal', one(['../../x'])),
    absolute: await writeOsworldTestDataset(scratch, 'absolute', one(['/etc/passwd'])),
    dots: await writeOsworldTestDataset(scratch, 'dots', one(['..'])),
    caseTwins: await writeOsworldTestDataset(scratch, 'case-twins', one(['Task-1', 'task-1'])),
    slashTwins: await writeOsworldTestDataset(scratch, 'slash-twins', one(['a_b', 'a/b'])),
  };
  writeFileSync(
    path.join(scratch, 'bad-limits.yaml'),
    'limits:\n  - model: m\n    requestsPerMinute: -5\n',
  );
  const admin = new pg.Client({ connectionString: services.databaseUrl });
  await admin.connect();
  await admin.query(`drop database if exists ${emptyDatabase}`);
  await admin.query(`create database ${emptyDatabase}`);
  await admin.end();
  emptyDatabaseUrl = withDatabase(services.databaseUrl, emptyDatabase);
  runsDatabase = await createTestDatabase(inject('adminDatabaseUrl'), inject('templateDatabase'));
  await writeQueuedRuns(runsDatabase.db);
  await writeFile(path.join(scratch, 'existing.txt'), EXISTING_FILE_TEXT);
  await mkdir(path.join(scratch, 'kept'));
  await writeFile(path.join(scratch, 'kept', 'notes.txt'), EXISTING_FILE_TEXT);
  const before = await scratchFiles();
  results = await pooled(cases, 3, (testCase) =>
    runCli(testCase.cli ?? 'scheduler', testCase.args(), testCase.env?.() ?? services.env, 600_000),
  );
  expect(await scratchFiles()).toEqual(before);
}, 600_000);

/** Runs whose tasks have not settled: a, b and c are WebShop runs, os an OSWorld one. */
async function writeQueuedRuns(db: Database): Promise<void> {
  const runs: [string, string, string[]][] = [
    ['run-a', 'webshop', ['goal-00001', 'goal-00002']],
    ['run-b', 'webshop', ['goal-00003']],
    ['run-c', 'webshop', ['goal-00001']],
    ['run-os', 'osworld', ['os-1']],
  ];
  for (const [id, benchmark, taskIds] of runs)
    await new RunsRepository(db).createWithTasks({
      run: {
        id,
        name: id,
        benchmark,
        config: JSON.stringify(benchmark === 'webshop' ? { catalog_id: 'demo' } : {}),
        code_version: 'test',
      },
      tasks: taskIds.map((taskId, seq) => ({
        task_id: taskId,
        seq,
        domain: 'test',
        instruction: taskId,
        spec: '{}',
      })),
    });
}

async function scratchFiles(): Promise<string[]> {
  return (await readdir(scratch, { recursive: true })).sort();
}

afterAll(async () => {
  const admin = new pg.Client({ connectionString: services.databaseUrl });
  await admin.connect();
  await admin.query(`drop database if exists ${emptyDatabase} with (force)`);
  await admin.end();
  await runsDatabase?.drop();
  await rm(scratch, { recursive: true, force: true });
});

describe('bad input, refused at the edge', () => {
  it(`counts ${cases.length} cases, the issue's and more`, () => {
    expect(cases.length).toBeGreaterThanOrEqual(60);
    expect(new Set(cases.map((testCase) => testCase.name)).size).toBe(cases.length);
  });

  it.each(cases.map((testCase, index) => [testCase.name, index] as const))(
    '%s: exit 2, one line naming it and the fix',
    (_name, index) => {
      const testCase = cases[index]!;
      const result = results[index]!;
      const lines = result.stderr.trim().split('\n');
      expect(lines, result.stderr).toHaveLength(1);
      const program = testCase.cli ?? 'scheduler';
      expect(lines[0]).toMatch(new RegExp(`^${program}: `));
      expect(lines[0]).toMatch(testCase.says);
      expect(result.stderr).not.toMatch(/\n\s+at |ZodError|"code":|✖|hunter2/);
      expect(result.code).toBe(testCase.code ?? 2);
      expect(result.stdout).toBe('');
    },
  );

  it('wrote nothing: no run, no task, no job, no key', async () => {
    expect(await services.db.selectFrom('runs').select('id').execute()).toEqual([]);
    expect(await services.db.selectFrom('tasks').select('task_id').execute()).toEqual([]);
    expect(
      await services.db
        .withTables<WebshopTables>()
        .selectFrom('webshop_catalogs')
        .select('id')
        .execute(),
    ).toEqual([{ id: 'demo' }]);
    expect(await redisKeys()).toEqual([]);
  });

  it('left the runs it was pointed at and the files it was pointed at as they were', async () => {
    const runs = await runsDatabase.db
      .selectFrom('runs')
      .select(['id', 'status', 'summary'])
      .orderBy('id')
      .execute();
    expect(runs.map((run) => [run.id, run.status, run.summary])).toEqual([
      ['run-a', 'queued', null],
      ['run-b', 'queued', null],
      ['run-c', 'queued', null],
      ['run-os', 'queued', null],
    ]);
    expect(await readFile(path.join(scratch, 'existing.txt'), 'utf8')).toBe(EXISTING_FILE_TEXT);
    expect(await readFile(path.join(scratch, 'kept', 'notes.txt'), 'utf8')).toBe(
      EXISTING_FILE_TEXT,
    );
  });
});
