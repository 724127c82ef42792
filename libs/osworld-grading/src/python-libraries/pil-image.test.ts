import { describe, expect, it } from 'vitest';
import { convertPil, pilImagesDiffer, resizeLanczos, type PilImage } from './pil-image.js';

const image = (
  mode: PilImage['mode'],
  width: number,
  height: number,
  data: number[],
): PilImage => ({
  mode,
  width,
  height,
  bands: { '1': 1, L: 1, LA: 2, P: 3, RGB: 3, RGBA: 4 }[mode],
  data: Uint8Array.from(data),
});

// Expected pixels printed by Pillow 9.4.0 (Debian 12), the version the golden cases were made with.
describe('resizeLanczos', () => {
  it('gives Pillow’s LANCZOS pixels, both passes, up and down', () => {
    const sut = image(
      'RGB',
      5,
      4,
      [
        159, 228, 197, 57, 76, 222, 1, 209, 203, 119, 77, 70, 64, 113, 128, 141, 253, 202, 158, 252,
        54, 40, 156, 11, 9, 131, 118, 233, 160, 131, 126, 63, 3, 49, 176, 51, 94, 0, 211, 39, 68,
        224, 129, 216, 163, 189, 23, 137, 129, 222, 92, 152, 15, 98, 82, 38, 208, 96, 249, 150,
      ],
    );
    expect([...resizeLanczos(sut, 3, 7).data]).toEqual([
      105, 151, 221, 33, 134, 199, 86, 96, 94, 133, 203, 204, 36, 159, 121, 107, 113, 101, 160, 255,
      149, 43, 172, 33, 131, 139, 127, 125, 199, 50, 45, 110, 98, 119, 150, 172, 97, 111, 14, 67,
      44, 192, 91, 147, 198, 141, 106, 73, 110, 48, 154, 87, 148, 190, 177, 123, 127, 135, 68, 107,
      90, 149, 177,
    ]);
  });

  it('resizes RGBA premultiplied by alpha, as Pillow does', () => {
    const sut = image(
      'RGBA',
      4,
      4,
      [
        9, 223, 119, 139, 82, 191, 6, 94, 7, 31, 246, 167, 109, 133, 222, 87, 150, 174, 90, 132,
        195, 231, 38, 238, 1, 192, 206, 34, 106, 207, 3, 160, 202, 130, 185, 57, 50, 92, 45, 88,
        241, 146, 86, 69, 242, 113, 250, 131, 132, 228, 189, 148, 108, 223, 104, 235, 17, 109, 132,
        242, 64, 205, 172, 182,
      ],
    );
    expect([...resizeLanczos(sut, 3, 3).data]).toEqual([
      86, 232, 65, 147, 73, 125, 132, 142, 40, 115, 176, 113, 170, 164, 75, 121, 182, 204, 32, 95,
      190, 163, 113, 106, 130, 229, 169, 131, 58, 148, 107, 201, 85, 148, 191, 177,
    ]);
  });
});

describe('convertPil', () => {
  it('computes luma with Pillow’s fixed-point L24 and keeps alpha for LA', () => {
    const rgba = image(
      'RGBA',
      6,
      1,
      [
        18, 151, 56, 49, 224, 50, 115, 191, 180, 141, 205, 118, 158, 208, 172, 163, 103, 142, 101,
        189, 97, 118, 192, 128,
      ],
    );
    expect([...convertPil(rgba, 'L').data]).toEqual([100, 109, 160, 189, 126, 120]);
    expect([...convertPil(rgba, 'LA').data]).toEqual([
      100, 49, 109, 191, 160, 118, 189, 163, 126, 189, 120, 128,
    ]);
  });
});

describe('pilImagesDiffer', () => {
  it('sees any band of RGB and L, but only the alpha band of RGBA (Pillow 9.4 getbbox)', () => {
    expect(pilImagesDiffer(image('RGB', 1, 1, [1, 2, 3]), image('RGB', 1, 1, [1, 2, 4]))).toBe(
      true,
    );
    expect(pilImagesDiffer(image('L', 1, 1, [7]), image('L', 1, 1, [7]))).toBe(false);
    expect(
      pilImagesDiffer(image('RGBA', 1, 1, [0, 0, 0, 255]), image('RGBA', 1, 1, [9, 9, 9, 255])),
    ).toBe(false);
    expect(
      pilImagesDiffer(image('RGBA', 1, 1, [0, 0, 0, 255]), image('RGBA', 1, 1, [0, 0, 0, 128])),
    ).toBe(true);
  });
});
