import { UsageError } from '@benchfleet/core';

/**
 * Task ids become job ids, Redis keys and directory names (screenshots, exports), so they are
 * limited to a set that is safe in all of them: letters, digits, `.`, `_` and `-`, starting with a
 * letter or digit, at most 200 characters. Two ids may not differ only in case (a case-insensitive
 * file system would write both to one directory).
 */
const TASK_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;

export function checkTaskIds(taskIds: readonly string[], source: string): void {
  const seen = new Map<string, string>();
  for (const taskId of taskIds) {
    if (!TASK_ID_PATTERN.test(taskId)) {
      throw new UsageError(
        `task id ${JSON.stringify(taskId.slice(0, 80))} in ${source} is not allowed: use letters, digits, . _ - (starting with a letter or digit, at most 200 characters)`,
      );
    }
    const key = taskId.toLowerCase();
    const earlier = seen.get(key);
    if (earlier !== undefined) {
      throw new UsageError(
        earlier === taskId
          ? `task id ${taskId} appears twice in ${source}: every task needs its own id`
          : `task ids ${earlier} and ${taskId} in ${source} differ only in case: they would share a directory; rename one`,
      );
    }
    seen.set(key, taskId);
  }
}
