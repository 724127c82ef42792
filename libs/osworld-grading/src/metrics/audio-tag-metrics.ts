// Port of check_mp3_meta from desktop_env/evaluators/metrics/others.py: ID3 tags read as EasyID3
// gives them, each matched by _match_value_to_rule.
import { loadEasyId3 } from '../python-libraries/id3-tags.js';
import { pyAttributeError } from '../python/builtins.js';
import { PyDict, pyFloat } from '../python/values.js';
import { portedMetric, scoreOf, type PortedMetric } from './metric-function.js';
import { matchValueToRule } from './rule-matching.js';

const checkMp3Meta = portedMetric(
  { name: 'check_mp3_meta', parameters: ['result', 'meta'] },
  async ([result, meta]) => {
    if (result === null) return pyFloat(0);
    const tags = await loadEasyId3(result);
    if (!(meta instanceof PyDict)) {
      throw pyAttributeError(meta, 'items');
    }
    let metric = true;
    for (const [key, rule] of meta.items()) {
      if (typeof key !== 'string') {
        throw pyAttributeError(key, 'lower');
      }
      // A tag that is absent reads as "" (EasyID3.get's default); several values are joined by ",".
      const values = tags.get(key);
      const value = values === undefined ? '' : values.join(',');
      metric = metric && matchValueToRule(value, rule);
    }
    return scoreOf(metric);
  },
);

export const audioTagMetrics: readonly PortedMetric[] = [checkMp3Meta];
