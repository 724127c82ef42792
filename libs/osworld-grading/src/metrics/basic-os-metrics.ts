// Ports of desktop_env/evaluators/metrics/basic_os.py: check_moved_jpgs and is_in_vm_clickboard,
// which return Python ints (0/1), not floats.
import { portedMetric, type PortedMetric } from './metric-function.js';
import { pyContains, pyGetItem, pyIter, pyLen, pySetEquals } from '../python/builtins.js';
import { pyInt } from '../python/values.js';

const checkMovedJpgs = portedMetric(
  { name: 'check_moved_jpgs', parameters: ['directory_list', 'rule'] },
  ([directoryList, rule]) => {
    const expected = pyGetItem(rule, 'expected');
    // Only the top-level children's names count, files or folders alike.
    const moved = pyIter(pyGetItem(directoryList, 'children')).map((node) =>
      pyGetItem(node, 'name'),
    );
    if (moved.length !== pyLen(expected)) return pyInt(0);
    return pyInt(pySetEquals(moved, pyIter(expected)) ? 1 : 0);
  },
);

const isInVmClickboard = portedMetric(
  { name: 'is_in_vm_clickboard', parameters: ['config', 'terminal_output'] },
  ([config, terminalOutput]) => {
    const expected = pyGetItem(config, 'expected');
    if (!Array.isArray(expected)) return pyInt(pyContains(terminalOutput, expected) ? 1 : 0);
    return pyInt(expected.every((item) => pyContains(terminalOutput, item)) ? 1 : 0);
  },
);

export const basicOsMetrics: readonly PortedMetric[] = [checkMovedJpgs, isInVmClickboard];
