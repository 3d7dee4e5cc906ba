import { randomBytes } from 'node:crypto';

/** A multipart/form-data body with one file field. */
export function multipartFile(field: string, filename: string, content: Uint8Array): { body: Buffer; contentType: string } {
  const boundary = `spanfuse-${randomBytes(12).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\n` +
      `Content-Disposition: form-data; name="${field}"; filename="${filename}"\r\n` +
      'Content-Type: application/octet-stream\r\n\r\n',
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return { body: Buffer.concat([head, content, tail]), contentType: `multipart/form-data; boundary=${boundary}` };
}
