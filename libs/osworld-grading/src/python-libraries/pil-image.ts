// The part of Pillow 9.4 that `compare_image_list` uses: `Image.open`, `resize(size, LANCZOS)`,
// `convert(mode)`, and `ImageChops.difference(a, b).getbbox()`, on 8-bit L, LA, RGB, RGBA images
// (and 1-bit / palette images as the side being converted). Pixels are decoded by sharp, whose
// libjpeg-turbo decode is bit-identical to Pillow's (default islow IDCT, fancy upsampling); the
// resampling and conversions are Pillow's integer arithmetic (Resample.c, Convert.c).
import sharp, { type OutputInfo } from 'sharp';
import { PythonException } from '../python/exceptions.js';
import { pyReadBytes } from '../python/text-files.js';
import { pyRepr, type PyValue } from '../python/values.js';

export type PilMode = '1' | 'L' | 'LA' | 'P' | 'RGB' | 'RGBA';

/**
 * An opened image: `bands` values per pixel, row-major. A palette image ("P") is held by its
 * palette colours (RGB or RGBA), which is what converting it yields.
 */
export type PilImage = {
  readonly mode: PilMode;
  readonly width: number;
  readonly height: number;
  readonly bands: number;
  readonly data: Uint8Array;
};

/** The input is an image Pillow would open but this port does not handle: the task is ungraded. */
class UnsupportedImageError extends Error {}

const bandsOf: Record<PilMode, number> = { '1': 1, L: 1, LA: 2, P: 3, RGB: 3, RGBA: 4 };

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

const startsWith = (bytes: Uint8Array, prefix: readonly number[], offset = 0): boolean =>
  prefix.every((byte, index) => bytes[offset + index] === byte);

/** Other formats Pillow identifies (its plugins' magic numbers); this port does not decode them. */
function otherPillowFormat(bytes: Uint8Array): string | undefined {
  const ascii = (offset: number, length: number): string =>
    String.fromCharCode(...bytes.subarray(offset, offset + length));
  if (ascii(0, 4) === 'GIF8') return 'GIF';
  if (ascii(0, 2) === 'BM') return 'BMP';
  if (ascii(0, 4) === 'II*\0' || ascii(0, 4) === 'MM\0*') return 'TIFF';
  if (ascii(0, 4) === 'RIFF' && ascii(8, 4) === 'WEBP') return 'WEBP';
  if (startsWith(bytes, [0, 0, 1, 0])) return 'ICO';
  if (/^P[1-7]\s/.test(ascii(0, 3))) return 'PPM';
  return undefined;
}

/** PIL's mode for a PNG, from IHDR (bit depth, colour type); 16-bit images are not handled. */
function pngMode(bytes: Uint8Array, path: string): PilMode {
  const bitDepth = bytes[24];
  const colourType = bytes[25];
  if (bitDepth === 16) throw new UnsupportedImageError(`16-bit PNG ${path} is not supported`);
  if (colourType === 0) return bitDepth === 1 ? '1' : 'L';
  if (colourType === 2) return 'RGB';
  if (colourType === 3) return 'P';
  if (colourType === 4) return 'LA';
  if (colourType === 6) return 'RGBA';
  throw new UnsupportedImageError(`PNG colour type ${colourType} of ${path} is not supported`);
}

/** `Image.open(path)` followed by the load that `resize`/`difference` trigger. */
export async function openPilImage(path: PyValue): Promise<PilImage> {
  const bytes = new Uint8Array(await pyReadBytes(path));
  const name = path as string;
  let mode: PilMode;
  if (startsWith(bytes, PNG_SIGNATURE)) mode = pngMode(bytes, name);
  else if (startsWith(bytes, [0xff, 0xd8, 0xff])) mode = 'L';
  else {
    const other = otherPillowFormat(bytes);
    if (other !== undefined) {
      throw new UnsupportedImageError(`${other} image ${name} is not supported by the port`);
    }
    throw new PythonException(
      'UnidentifiedImageError',
      `cannot identify image file ${pyRepr(name)}`,
    );
  }
  let raw: { data: Buffer; info: OutputInfo };
  try {
    // Pillow applies neither the embedded ICC profile nor the EXIF orientation.
    raw = await sharp(bytes, { ignoreIcc: true, failOn: 'error' })
      .raw()
      .toBuffer({ resolveWithObject: true });
  } catch (error) {
    throw new PythonException('OSError', String((error as Error).message ?? error));
  }
  const { width, height, channels } = raw.info;
  if (mode === 'L' && startsWith(bytes, [0xff, 0xd8, 0xff])) {
    if (channels === 3) mode = 'RGB';
    else if (channels !== 1) {
      throw new UnsupportedImageError(`JPEG ${name} with ${channels} channels is not supported`);
    }
  }
  // sharp expands palettes and transparency keys into channels; keep the bands Pillow's mode has.
  const pick: number[] =
    mode === 'L' || mode === '1'
      ? [0]
      : mode === 'LA'
        ? [0, channels - 1]
        : mode === 'RGB'
          ? [0, 1, 2]
          : mode === 'RGBA'
            ? [0, 1, 2, 3]
            : channels === 4
              ? [0, 1, 2, 3]
              : channels === 2
                ? [0, 0, 0, 1]
                : channels === 1
                  ? [0, 0, 0]
                  : [0, 1, 2];
  if (pick.some((channel) => channel >= channels)) {
    throw new UnsupportedImageError(`${name}: ${channels} decoded channels for mode ${mode}`);
  }
  const data = new Uint8Array(width * height * pick.length);
  for (let pixel = 0; pixel < width * height; pixel += 1) {
    pick.forEach((channel, band) => {
      data[pixel * pick.length + band] = raw.data[pixel * channels + channel] ?? 0;
    });
  }
  return { mode, width, height, bands: pick.length, data };
}

// ---- resize (Resample.c) ----

const PRECISION_BITS = 32 - 8 - 2;
const LANCZOS_SUPPORT = 3.0;

const sinc = (x: number): number => (x === 0 ? 1.0 : Math.sin(x * Math.PI) / (x * Math.PI));
const lanczos = (x: number): number => (x >= -3.0 && x < 3.0 ? sinc(x) * sinc(x / 3) : 0.0);

/** Pillow's `precompute_coeffs` + `normalize_coeffs_8bpc`: per output pixel, its first input and fixed-point weights. */
function coefficients(inSize: number, outSize: number): Array<{ min: number; weights: number[] }> {
  const scale = inSize / outSize;
  const filterScale = Math.max(scale, 1.0);
  const support = LANCZOS_SUPPORT * filterScale;
  const result: Array<{ min: number; weights: number[] }> = [];
  for (let xx = 0; xx < outSize; xx += 1) {
    const center = (xx + 0.5) * scale;
    const ss = 1.0 / filterScale;
    const min = Math.max(0, Math.trunc(center - support + 0.5));
    const max = Math.min(inSize, Math.trunc(center + support + 0.5)) - min;
    const raw: number[] = [];
    let total = 0.0;
    for (let x = 0; x < max; x += 1) {
      const w = lanczos((x + min - center + 0.5) * ss);
      raw.push(w);
      total += w;
    }
    const weights = raw.map((w) => {
      const k = total !== 0.0 ? w / total : w;
      return Math.trunc(k < 0 ? -0.5 + k * (1 << PRECISION_BITS) : 0.5 + k * (1 << PRECISION_BITS));
    });
    result.push({ min, weights });
  }
  return result;
}

const clip8 = (sum: number): number => {
  const value = Math.floor(sum / (1 << PRECISION_BITS));
  return value < 0 ? 0 : value > 255 ? 255 : value;
};

/** One separable pass of `ImagingResample` along x (horizontal) or y. */
function resamplePass(image: PilImage, outSize: number, horizontal: boolean): PilImage {
  const { width, height, bands, data } = image;
  const inSize = horizontal ? width : height;
  const outWidth = horizontal ? outSize : width;
  const outHeight = horizontal ? height : outSize;
  const out = new Uint8Array(outWidth * outHeight * bands);
  const table = coefficients(inSize, outSize);
  for (let y = 0; y < outHeight; y += 1) {
    for (let x = 0; x < outWidth; x += 1) {
      const { min, weights } = table[horizontal ? x : y] ?? { min: 0, weights: [] };
      for (let band = 0; band < bands; band += 1) {
        let sum = 1 << (PRECISION_BITS - 1);
        weights.forEach((weight, offset) => {
          const sx = horizontal ? min + offset : x;
          const sy = horizontal ? y : min + offset;
          sum += (data[(sy * width + sx) * bands + band] ?? 0) * weight;
        });
        out[(y * outWidth + x) * bands + band] = clip8(sum);
      }
    }
  }
  return { ...image, width: outWidth, height: outHeight, data: out };
}

/** `resize` with NEAREST (Pillow forces it for "1" and "P"): the source pixel under each centre. */
function resizeNearest(image: PilImage, width: number, height: number): PilImage {
  const out = new Uint8Array(width * height * image.bands);
  for (let y = 0; y < height; y += 1) {
    const sy = Math.min(image.height - 1, Math.floor(((y + 0.5) * image.height) / height));
    for (let x = 0; x < width; x += 1) {
      const sx = Math.min(image.width - 1, Math.floor(((x + 0.5) * image.width) / width));
      for (let band = 0; band < image.bands; band += 1) {
        out[(y * width + x) * image.bands + band] =
          image.data[(sy * image.width + sx) * image.bands + band] ?? 0;
      }
    }
  }
  return { ...image, width, height, data: out };
}

const mulDiv255 = (a: number, b: number): number => {
  const tmp = a * b + 128;
  return ((tmp >> 8) + tmp) >> 8;
};

/** RGBA/LA → RGBa/La and back: Pillow resizes colour premultiplied by alpha. */
function premultiply(image: PilImage, forward: boolean): PilImage {
  const data = new Uint8Array(image.data);
  const alphaBand = image.bands - 1;
  for (let pixel = 0; pixel < image.width * image.height; pixel += 1) {
    const base = pixel * image.bands;
    const alpha = data[base + alphaBand] ?? 0;
    for (let band = 0; band < alphaBand; band += 1) {
      const value = data[base + band] ?? 0;
      if (forward) data[base + band] = mulDiv255(value, alpha);
      else if (alpha !== 255 && alpha !== 0) {
        data[base + band] = Math.min(255, Math.floor((255 * value) / alpha));
      }
    }
  }
  return { ...image, data };
}

/** `image.resize((width, height), Image.Resampling.LANCZOS)`. */
export function resizeLanczos(image: PilImage, width: number, height: number): PilImage {
  if (image.width === width && image.height === height) return image;
  if (image.mode === '1' || image.mode === 'P') return resizeNearest(image, width, height);
  const premultiplied = image.mode === 'LA' || image.mode === 'RGBA';
  let current = premultiplied ? premultiply(image, true) : image;
  if (width !== current.width) current = resamplePass(current, width, true);
  if (height !== current.height) current = resamplePass(current, height, false);
  return premultiplied ? premultiply(current, false) : current;
}

// ---- convert (Convert.c) ----

/** ITU-R 601-2 luma in Pillow's fixed point (`L24(rgb) >> 16`). */
const luma = (r: number, g: number, b: number): number =>
  Math.floor((r * 19595 + g * 38470 + b * 7471 + 0x8000) / 65536);

/** `image.convert(mode)` between the modes this port handles. */
export function convertPil(image: PilImage, mode: PilMode): PilImage {
  if (image.mode === mode) return image;
  if (mode === '1' || mode === 'P') {
    // Pillow dithers or quantises here; not reproduced.
    throw new UnsupportedImageError(`converting ${image.mode} to ${mode} is not supported`);
  }
  const source = image.mode === '1' ? { ...image, mode: 'L' as const } : image;
  const pixels = source.width * source.height;
  const bands = bandsOf[mode];
  const out = new Uint8Array(pixels * bands);
  for (let pixel = 0; pixel < pixels; pixel += 1) {
    const at = (band: number): number => source.data[pixel * source.bands + band] ?? 0;
    let r: number;
    let g: number;
    let b: number;
    let alpha = 255;
    let grey: number | undefined;
    if (source.mode === 'L') {
      r = g = b = at(0);
      grey = at(0);
    } else if (source.mode === 'LA') {
      r = g = b = at(0);
      grey = at(0);
      alpha = at(1);
    } else {
      r = at(0);
      g = at(1);
      b = at(2);
      if (source.bands === 4) alpha = at(3);
    }
    const l = grey ?? luma(r, g, b);
    const values =
      mode === 'L'
        ? [l]
        : mode === 'LA'
          ? [l, alpha]
          : mode === 'RGB'
            ? [r, g, b]
            : [r, g, b, alpha];
    values.forEach((value, band) => {
      out[pixel * bands + band] = value;
    });
  }
  return { mode, width: source.width, height: source.height, bands, data: out };
}

/**
 * `ImageChops.difference(a, b).getbbox() is not None` for two images of one mode and size.
 * Pillow 9.4's getbbox looks only at the alpha band of RGBA and LA images: two of them that differ
 * in colour alone have no bounding box, so they count as equal.
 */
export function pilImagesDiffer(a: PilImage, b: PilImage): boolean {
  const checked =
    a.mode === 'RGBA' || a.mode === 'LA'
      ? [a.bands - 1]
      : Array.from({ length: a.bands }, (_, band) => band);
  const pixels = Math.min(a.width, b.width) * Math.min(a.height, b.height);
  for (let pixel = 0; pixel < pixels; pixel += 1) {
    for (const band of checked) {
      if (a.data[pixel * a.bands + band] !== b.data[pixel * b.bands + band]) return true;
    }
  }
  return false;
}
