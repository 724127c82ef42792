// `compare_image_list(pred_img_path_list, gold_img_path_list)` (metrics/gimp.py).
import {
  convertPil,
  openPilImage,
  pilImagesDiffer,
  resizeLanczos,
} from '../python-libraries/pil-image.js';
import { pyZip } from '../python/builtins.js';
import { pyFloat, pyTruthy, type PythonValue, type PyValue } from '../python/values.js';
import { portedMetric } from './metric-function.js';

async function compareImageList(pred: PyValue, gold: PyValue): Promise<PythonValue> {
  // Only a non-list prediction wraps both sides (a str gold beside a list is zipped by character).
  const [predictions, golds]: [PyValue, PyValue] = Array.isArray(pred)
    ? [pred, gold]
    : [[pred], [gold]];
  for (const [predPath, goldPath] of pyZip(predictions, golds)) {
    if (!pyTruthy(predPath) || !pyTruthy(goldPath)) return pyFloat(0.0);
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

export const compareImageListMetric = portedMetric(
  { name: 'compare_image_list', parameters: ['pred_img_path_list', 'gold_img_path_list'] },
  ([pred, gold]) => compareImageList(pred, gold),
);
