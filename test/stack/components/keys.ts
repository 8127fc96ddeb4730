// Keys and certificates of the stack, generated once per stack dir (kept across down/up):
// the token issuer's ES256 key + self-signed certificate (the token registry's rootcertbundle),
// a CA and a server certificate for the HTTPS git server, ed25519 keys for sshd and its client, and
// for the builders' mutual-TLS fronts: a server certificate and a client pair signed by the same CA,
// and a client pair from another CA (which the fronts refuse). All EC P-256.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Layout } from '../layout.js';
import { run } from '../proc.js';
import type { Component, Ctx } from './types.js';

export function keyPaths(l: Layout) {
  return {
    tokenKey: path.join(l.token, 'key.pem'),
    tokenCert: path.join(l.token, 'cert.pem'),
    caKey: path.join(l.tls, 'ca.key'),
    caCert: path.join(l.tls, 'ca.pem'),
    serverKey: path.join(l.tls, 'server.key'),
    serverCert: path.join(l.tls, 'server.pem'),
    sshHostKey: path.join(l.ssh, 'host_ed25519'),
    sshClientKey: path.join(l.ssh, 'client_ed25519'),
    builderServerKey: path.join(l.builderTls, 'server.key'),
    builderServerCert: path.join(l.builderTls, 'server.pem'),
    builderClientKey: path.join(l.builderTls, 'client.key'),
    builderClientCert: path.join(l.builderTls, 'client.pem'),
    otherCaKey: path.join(l.builderTls, 'other-ca.key'),
    otherCaCert: path.join(l.builderTls, 'other-ca.pem'),
    otherClientKey: path.join(l.builderTls, 'other-client.key'),
    otherClientCert: path.join(l.builderTls, 'other-client.pem'),
  };
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];

async function tokenKeys(l: Layout): Promise<void> {
  const k = keyPaths(l);
  if (fs.existsSync(k.tokenKey) && fs.existsSync(k.tokenCert)) return;
  fs.mkdirSync(l.token, { recursive: true });
  await run('openssl', [
    'req',
    '-x509',
    ...EC,
    '-keyout',
    k.tokenKey,
    '-out',
    k.tokenCert,
    '-days',
    '3650',
    '-subj',
    '/CN=ibs-stack-token-issuer',
  ]);
}

/** The stack CA and the HTTPS git server's certificate; true when the CA was (re)made. */
async function tlsKeys(l: Layout): Promise<boolean> {
  const k = keyPaths(l);
  if (fs.existsSync(k.caCert) && fs.existsSync(k.serverKey) && fs.existsSync(k.serverCert)) return false;
  fs.mkdirSync(l.tls, { recursive: true });
  await selfSignedCa(k.caKey, k.caCert, 'ibs-stack test CA');
  await signed(
    { key: k.caKey, cert: k.caCert },
    { key: k.serverKey, cert: k.serverCert },
    '127.0.0.1',
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth',
  );
  return true;
}

async function selfSignedCa(key: string, cert: string, cn: string): Promise<void> {
  await run('openssl', [
    'req',
    '-x509',
    ...EC,
    '-keyout',
    key,
    '-out',
    cert,
    '-days',
    '3650',
    '-subj',
    `/CN=${cn}`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
}

/** A key and a certificate for it signed by the CA (random serial: no serial file shared). */
async function signed(
  ca: { key: string; cert: string },
  out: { key: string; cert: string },
  cn: string,
  ext: string,
): Promise<void> {
  const csr = `${out.cert}.csr`;
  const extFile = `${out.cert}.ext`;
  await run('openssl', ['req', '-new', ...EC, '-keyout', out.key, '-out', csr, '-subj', `/CN=${cn}`]);
  fs.writeFileSync(extFile, `basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\n${ext}\n`);
  const serial = `0x${crypto.randomBytes(12).toString('hex')}`;
  await run('openssl', [
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    ca.cert,
    '-CAkey',
    ca.key,
    '-set_serial',
    serial,
    '-out',
    out.cert,
    '-days',
    '825',
    '-extfile',
    extFile,
  ]);
  fs.rmSync(csr, { force: true });
  fs.rmSync(extFile, { force: true });
  fs.chmodSync(out.key, 0o600);
}

/** The builders' TLS fronts: server and client pairs from the stack CA, a client pair from another. */
async function builderTlsKeys(l: Layout, newCa: boolean): Promise<void> {
  const k = keyPaths(l);
  if (!newCa && fs.existsSync(k.otherClientCert)) return;
  fs.rmSync(l.builderTls, { recursive: true, force: true });
  fs.mkdirSync(l.builderTls, { recursive: true, mode: 0o700 });
  const ca = { key: k.caKey, cert: k.caCert };
  await signed(
    ca,
    { key: k.builderServerKey, cert: k.builderServerCert },
    '127.0.0.1',
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth',
  );
  await signed(
    ca,
    { key: k.builderClientKey, cert: k.builderClientCert },
    'image-build-service',
    'extendedKeyUsage=clientAuth',
  );
  await selfSignedCa(k.otherCaKey, k.otherCaCert, 'ibs-stack other CA');
  await signed(
    { key: k.otherCaKey, cert: k.otherCaCert },
    { key: k.otherClientKey, cert: k.otherClientCert },
    'image-build-service',
    'extendedKeyUsage=clientAuth',
  );
}

async function sshKeys(l: Layout): Promise<void> {
  const k = keyPaths(l);
  fs.mkdirSync(l.ssh, { recursive: true, mode: 0o700 });
  for (const [file, comment] of [
    [k.sshHostKey, 'ibs-stack-host'],
    [k.sshClientKey, 'ibs-stack-client'],
  ] as const) {
    if (fs.existsSync(file) && fs.existsSync(`${file}.pub`)) continue;
    fs.rmSync(file, { force: true });
    fs.rmSync(`${file}.pub`, { force: true });
    await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', comment, '-f', file]);
  }
}

export const keys: Component = {
  name: 'keys',
  deps: [],
  daemons: [],
  ensure: async ({ l }: Ctx) => {
    const k = keyPaths(l);
    const before = [k.sshClientKey, k.serverCert, k.otherClientCert].every((f) => fs.existsSync(f));
    await Promise.all([tokenKeys(l), tlsKeys(l).then((newCa) => builderTlsKeys(l, newCa)), sshKeys(l)]);
    return before ? 'reused' : 'started';
  },
};
