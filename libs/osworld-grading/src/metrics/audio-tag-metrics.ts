// Port of check_mp3_meta from desktop_env/evaluators/metrics/others.py: ID3 tags read as EasyID3
// gives them, each matched by _match_value_to_rule.
import { loadEasyId3 } from '../id3-tags.js';
import type { PortedMetric } from '../metric-function.js';
import { bindPythonCall } from '../python-call.js';
import { PyDict, pyTypeName, type PyValue } from '../python-data.js';
import { pyFloat, PythonException } from '../python-value.js';
import { matchValueToRule } from '../rule-matching.js';

export const checkMp3Meta: PortedMetric = {
  name: 'check_mp3_meta',
  tolerance: 0,
  async run(args, options) {
    const [result, meta] = bindPythonCall(
      { name: 'check_mp3_meta', parameters: ['result', 'meta'] },
      args,
      options,
    ).values as [PyValue, PyValue];
    if (result === null) return pyFloat(0);
    const tags = await loadEasyId3(result);
    if (!(meta instanceof PyDict)) {
      throw new PythonException(
        'AttributeError',
        `'${pyTypeName(meta)}' object has no attribute 'items'`,
      );
    }
    let metric = true;
    for (const [key, rule] of meta.items()) {
      if (typeof key !== 'string') {
        throw new PythonException(
          'AttributeError',
          `'${pyTypeName(key)}' object has no attribute 'lower'`,
        );
      }
      // A tag that is absent reads as "" (EasyID3.get's default); several values are joined by ",".
      const values = tags.get(key);
      const value = values === undefined ? '' : values.join(',');
      metric = metric && matchValueToRule(value, rule);
    }
    return pyFloat(metric ? 1 : 0);
  },
};

export const audioTagMetrics: readonly PortedMetric[] = [checkMp3Meta];
