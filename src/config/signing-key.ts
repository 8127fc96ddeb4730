/**
 * The signing key, read once at startup: a PEM ECDSA P-256 private key in PKCS#8 (plain, or
 * encrypted with the password of SIGNING_KEY_PASSWORD), the format `cosign verify --key` checks
 * signatures against through its public half. Problems name the option, never the key.
 */
import { createHash, createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { readText } from './files.js';
import type { SigningKey } from './types.js';

const PKCS8 = /^-----BEGIN (ENCRYPTED )?PRIVATE KEY-----/;
const WHAT =
  'must be a PEM ECDSA P-256 private key in PKCS#8 (BEGIN PRIVATE KEY or BEGIN ENCRYPTED PRIVATE KEY)';

function privateKeyOf(pem: string, password: string | undefined): KeyObject | string {
  const encrypted = pem.startsWith('-----BEGIN ENCRYPTED');
  if (encrypted && password === undefined) return 'is encrypted: set its password in SIGNING_KEY_PASSWORD';
  try {
    return createPrivateKey({ key: pem, format: 'pem', ...(encrypted ? { passphrase: password } : {}) });
  } catch {
    return encrypted ? 'could not be decrypted with SIGNING_KEY_PASSWORD, or ' + WHAT : WHAT;
  }
}

/** The key at `path`, or a problem text (without any of the file's content). */
export function loadSigningKey(path: string, password: string | undefined): SigningKey | string {
  const read = readText(path);
  if (!read.ok) return `cannot read ${path} (${read.code})`;
  const pem = read.text.trim();
  if (!PKCS8.test(pem)) return `${path} ${WHAT}`;
  const privateKey = privateKeyOf(pem, password);
  if (typeof privateKey === 'string') return `${path} ${privateKey}`;
  const details = privateKey.asymmetricKeyDetails;
  if (privateKey.asymmetricKeyType !== 'ec' || details?.namedCurve !== 'prime256v1') return `${path} ${WHAT}`;
  const publicKey = createPublicKey(privateKey);
  const der = publicKey.export({ type: 'spki', format: 'der' });
  return {
    path,
    privateKey,
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    fingerprint: `sha256:${createHash('sha256').update(der).digest('hex')}`,
  };
}
