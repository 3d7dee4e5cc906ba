import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { HttpTransport } from '../../src/export/http-transport.js';

// node:https is loaded only for an https URL (src/core/builtins.ts): the
// transport must still speak TLS there. A self-signed server is refused by
// the default CA check, which only a TLS handshake can report.
let openssl = true;
try {
  execFileSync('openssl', ['version'], { stdio: 'ignore' });
} catch {
  openssl = false;
}

test('an https export URL goes over TLS (node:https loaded on demand)', { skip: !openssl && 'needs the openssl command' }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spanfuse-tls-'));
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=127.0.0.1'], { stdio: 'ignore' });
  let requests = 0;
  const server = createServer({ key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) }, (_req, res) => {
    requests++;
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  const t = new HttpTransport({ url: new URL(`https://127.0.0.1:${port}/v1/profiles`), headers: {} });
  try {
    const r = await t.send({ body: new Uint8Array([1, 2, 3]) }, 5000);
    assert.notEqual(r.kind, 'success');
    assert.match('reason' in r ? r.reason : '', /self[- ]signed|certificate/i);
    assert.equal(requests, 0);
    // The same server over plain http is not TLS: the handshake never starts.
    const plain = new HttpTransport({ url: new URL(`http://127.0.0.1:${port}/v1/profiles`), headers: {} });
    const p = await plain.send({ body: new Uint8Array([1]) }, 5000);
    plain.close();
    assert.doesNotMatch('reason' in p ? p.reason : '', /self[- ]signed|certificate/i);
  } finally {
    t.close();
    server.close();
  }
});
