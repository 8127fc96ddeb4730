/**
 * Mutual TLS to the builders (docs/fleet.md): the CA, client certificate and key files are read once
 * at startup to refuse what buildx would only reject at the first build. Only their paths go on (the
 * buildx remote driver's cacert, cert, key); the key's text is never kept, echoed or parsed into a message.
 */
import { KeyObject, X509Certificate, createPrivateKey } from 'node:crypto';
import { readText } from './files.js';
import type { OptionValues } from './option-values.js';
import type { BuilderTls } from './types.js';

type TlsOptions = Pick<
  OptionValues,
  'builderEndpoint' | 'builderTlsCa' | 'builderTlsCert' | 'builderTlsKey' | 'builderTlsServerName'
>;

type Kind = 'certificate' | 'key';

/** The file parsed as a PEM of that kind, or a problem text naming the option. */
function pemFile(
  option: string,
  path: string,
  kind: Kind,
): { problem: string } | { parsed: X509Certificate | KeyObject } {
  const read = readText(path);
  if (!read.ok) return { problem: `${option}: ${path} ${read.why}` };
  const expected = kind === 'key' ? 'a PEM private key' : 'a PEM certificate';
  const marker = kind === 'key' ? /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/ : /-----BEGIN CERTIFICATE-----/;
  if (!marker.test(read.text)) return { problem: `${option}: ${path} is not ${expected}` };
  try {
    return { parsed: kind === 'key' ? createPrivateKey(read.text) : new X509Certificate(read.text) };
  } catch {
    // The parser's message is not echoed: it could quote the file.
    return { problem: `${option}: ${path} is not ${expected} (it does not parse)` };
  }
}

/** Whether the client certificate is the key's (true when either is not given). */
function keyMatches(
  cert: X509Certificate | KeyObject | undefined,
  key: X509Certificate | KeyObject | undefined,
): boolean {
  return !(cert instanceof X509Certificate && key instanceof KeyObject) || cert.checkPrivateKey(key);
}

/** Every problem of the TLS options, each naming its option (empty when they are consistent). */
export function builderTlsProblems(options: TlsOptions): string[] {
  const problems: string[] = [];
  const files: [string, string | undefined, Kind][] = [
    ['--builder-tls-ca (BUILDER_TLS_CA_PATH)', options.builderTlsCa, 'certificate'],
    ['--builder-tls-cert (BUILDER_TLS_CERT_PATH)', options.builderTlsCert, 'certificate'],
    ['--builder-tls-key (BUILDER_TLS_KEY_PATH)', options.builderTlsKey, 'key'],
  ];
  const parsed = files.map(([option, path, kind]) => {
    if (path === undefined) return undefined;
    const file = pemFile(option, path, kind);
    if ('problem' in file) problems.push(file.problem);
    return 'parsed' in file ? file.parsed : undefined;
  });
  if (options.builderTlsCert !== undefined && options.builderTlsKey === undefined) {
    problems.push('--builder-tls-cert (BUILDER_TLS_CERT_PATH) is given without --builder-tls-key');
  }
  if (options.builderTlsKey !== undefined && options.builderTlsCert === undefined) {
    problems.push('--builder-tls-key (BUILDER_TLS_KEY_PATH) is given without --builder-tls-cert');
  }
  const [, cert, key] = parsed;
  if (problems.length === 0 && !keyMatches(cert, key)) {
    problems.push(
      '--builder-tls-key (BUILDER_TLS_KEY_PATH) is not the key of the --builder-tls-cert certificate',
    );
  }
  const anyFile = files.some(([, path]) => path !== undefined);
  if (options.builderTlsServerName !== undefined && !anyFile) {
    problems.push('--builder-tls-server-name (BUILDER_TLS_SERVER_NAME) is given without TLS files');
  }
  const unix = (options.builderEndpoint as string[] | undefined)?.find((endpoint) =>
    endpoint.startsWith('unix://'),
  );
  if (anyFile && unix !== undefined) {
    problems.push(`--builder-tls-* files are given for the unix socket endpoint ${unix} (TLS is for tcp://)`);
  }
  return problems;
}

/** The TLS settings of every builder, undefined when none is set (call after builderTlsProblems). */
export function builderTls(options: TlsOptions): BuilderTls | undefined {
  const tls: BuilderTls = {
    ...(options.builderTlsCa === undefined ? {} : { caPath: options.builderTlsCa }),
    ...(options.builderTlsCert === undefined ? {} : { certPath: options.builderTlsCert }),
    ...(options.builderTlsKey === undefined ? {} : { keyPath: options.builderTlsKey }),
    ...(options.builderTlsServerName === undefined ? {} : { serverName: options.builderTlsServerName }),
  };
  return Object.keys(tls).length === 0 ? undefined : tls;
}
