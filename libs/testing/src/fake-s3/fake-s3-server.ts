import { createServer, type Server } from 'node:http';

export interface FakeS3 {
  url: string;
  /** Stored objects by `bucket/key`. */
  objects: Map<string, { body: Buffer; contentType: string | undefined }>;
  /** Access key ids seen in SigV4 Authorization headers. */
  accessKeys: Set<string>;
  /** While set, every request is answered with this status (503 SlowDown, 500 InternalError), or never (`'hang'`). */
  failing: number | 'hang' | null;
  close(): Promise<void>;
}

const SIGV4 =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/\d{8}\/[^/]+\/s3\/aws4_request, SignedHeaders=[^,]+, Signature=[0-9a-f]{64}$/;

/**
 * Path-style S3 PUT and GET object: unsigned requests get 403 AccessDenied, unknown keys 404
 * NoSuchKey, as S3 answers them.
 */
export async function startFakeS3(options: { accessKeyId?: string } = {}): Promise<FakeS3> {
  const objects = new Map<string, { body: Buffer; contentType: string | undefined }>();
  const accessKeys = new Set<string>();
  const fake = { failing: null as FakeS3['failing'] };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const auth = SIGV4.exec(request.headers.authorization ?? '');
      const key = decodeURIComponent((request.url ?? '/').slice(1).split('?')[0] ?? '');
      const error = (status: number, code: string) => {
        response.writeHead(status, { 'content-type': 'application/xml' });
        response.end(
          `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Key>${key}</Key></Error>`,
        );
      };
      if (fake.failing === 'hang') return;
      if (fake.failing !== null)
        return error(fake.failing, fake.failing === 503 ? 'SlowDown' : 'InternalError');
      if (!auth?.[1] || (options.accessKeyId && auth[1] !== options.accessKeyId))
        return error(403, 'AccessDenied');
      accessKeys.add(auth[1]);
      if (request.method === 'PUT') {
        objects.set(key, {
          body: Buffer.concat(chunks),
          contentType: request.headers['content-type'],
        });
        response.writeHead(200, { etag: '"fake"' });
        return response.end();
      }
      if (request.method === 'GET') {
        const object = objects.get(key);
        if (!object) return error(404, 'NoSuchKey');
        response.writeHead(200, {
          'content-type': object.contentType ?? 'application/octet-stream',
        });
        return response.end(object.body);
      }
      return error(405, 'MethodNotAllowed');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return Object.assign(fake, {
    url: `http://127.0.0.1:${port}`,
    objects,
    accessKeys,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
