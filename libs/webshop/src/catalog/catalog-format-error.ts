import { UsageError } from '@benchfleet/core';

export type CatalogRecordRef = {
  /** Position in a list (the products list, or an asin's instruction list). */
  index?: number;
  /** Dictionary key of the record (the asin in items_ins_v2 / items_human_ins). */
  key?: string;
  asin?: string;
};

function describeRecord(record: CatalogRecordRef | undefined): string {
  if (record === undefined) return '';
  const parts: string[] = [];
  if (record.key !== undefined) parts.push(`key ${JSON.stringify(record.key)}`);
  if (record.index !== undefined) parts.push(`record #${record.index}`);
  if (record.asin !== undefined && record.asin !== record.key) parts.push(`asin ${record.asin}`);
  return parts.join(', ');
}

/**
 * A catalog input file that cannot be read, is not JSON, or holds a record the loader cannot use:
 * the user's to fix, so a CLI reports it as bad input (exit code 2).
 */
export class CatalogFormatError extends UsageError {
  override readonly name = 'CatalogFormatError';
  readonly file: string;
  readonly record: CatalogRecordRef | undefined;
  readonly issues: readonly string[];

  constructor(
    file: string,
    record: CatalogRecordRef | undefined,
    issues: readonly string[],
    options?: { cause?: unknown },
  ) {
    const where = [file, describeRecord(record)].filter((part) => part !== '').join(': ');
    super(`${where}: ${issues.join('; ')}`, options);
    this.file = file;
    this.record = record;
    this.issues = issues;
  }
}
