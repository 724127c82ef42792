// `compare_image_list(pred_img_path_list, gold_img_path_list)` (metrics/gimp.py).
import type { PortedMetric } from '../metric-function.js';
import { pyFloat, type PythonValue } from '../python-value.js';
import { convertPil, openPilImage, pilImagesDiffer, resizeLanczos } from './pil-image.js';
import { bindPythonCall, pythonTruthy, pythonZip } from './python-semantics.js';

export async function compareImageList(pred: unknown, gold: unknown): Promise<PythonValue> {
  // Only a non-list prediction wraps both sides (a str gold beside a list is zipped by character).
  const [predictions, golds] = Array.isArray(pred) ? [pred, gold] : [[pred], [gold]];
  for (const [predPath, goldPath] of pythonZip(predictions, golds)) {
    if (!pythonTruthy(predPath) || !pythonTruthy(goldPath)) return pyFloat(0.0);
    let predicted = await openPilImage(predPath);
    const expected = await openPilImage(goldPath);
    // The prediction is brought to the gold's size (LANCZOS), then to its mode.
    if (predicted.width !== expected.width || predicted.height !== expected.height) {
      predicted = resizeLanczos(predicted, expected.width, expected.height);
    }
    if (predicted.mode !== expected.mode) predicted = convertPil(predicted, expected.mode);
    if (pilImagesDiffer(predicted, expected)) return pyFloat(0.0);
  }
  return pyFloat(1.0);
}

export const compareImageListMetric: PortedMetric = {
  name: 'compare_image_list',
  tolerance: 0,
  run: async (args, options) => {
    const { positional } = bindPythonCall(
      'compare_image_list',
      args,
      options,
      ['pred_img_path_list', 'gold_img_path_list'],
      false,
    );
    return compareImageList(positional[0], positional[1]);
  },
};
