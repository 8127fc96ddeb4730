// Keys and certificates of the stack, generated once per stack dir (kept across down/up):
// the token issuer's ES256 key + self-signed certificate (the token registry's rootcertbundle),
// a CA and a server certificate for the HTTPS git server, and ed25519 keys for sshd and its client.
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

async function tlsKeys(l: Layout): Promise<void> {
  const k = keyPaths(l);
  if (fs.existsSync(k.caCert) && fs.existsSync(k.serverKey) && fs.existsSync(k.serverCert)) return;
  fs.mkdirSync(l.tls, { recursive: true });
  await run('openssl', [
    'req',
    '-x509',
    ...EC,
    '-keyout',
    k.caKey,
    '-out',
    k.caCert,
    '-days',
    '3650',
    '-subj',
    '/CN=ibs-stack test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  const csr = path.join(l.tls, 'server.csr');
  await run('openssl', ['req', '-new', ...EC, '-keyout', k.serverKey, '-out', csr, '-subj', '/CN=127.0.0.1']);
  const ext = path.join(l.tls, 'server.ext');
  fs.writeFileSync(
    ext,
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n',
  );
  await run('openssl', [
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    k.caCert,
    '-CAkey',
    k.caKey,
    '-CAcreateserial',
    '-out',
    k.serverCert,
    '-days',
    '825',
    '-extfile',
    ext,
  ]);
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
    const before = fs.existsSync(keyPaths(l).sshClientKey) && fs.existsSync(keyPaths(l).serverCert);
    await Promise.all([tokenKeys(l), tlsKeys(l), sshKeys(l)]);
    return before ? 'reused' : 'started';
  },
};
