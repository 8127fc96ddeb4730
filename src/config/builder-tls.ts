/**
 * Mutual TLS to the builders (docs/fleet.md): the CA, client certificate and key files are read once
 * at startup to refuse what buildx would only reject at the first build. Only their paths go on (the
 * buildx remote driver's cacert, cert, key); the key's text is never kept, echoed or parsed into a message.
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { OptionValues } from './option-values.js';
import type { BuilderTls } from './types.js';

type TlsOptions = Pick<
  OptionValues,
  'builderEndpoint' | 'builderTlsCa' | 'builderTlsCert' | 'builderTlsKey' | 'builderTlsServerName'
>;

type Kind = 'certificate' | 'key';

/** A problem text naming the option, or undefined when the file is a readable PEM of that kind. */
function pemProblem(option: string, path: string, kind: Kind): string | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    return `${option}: ${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`;
  }
  const expected = kind === 'key' ? 'a PEM private key' : 'a PEM certificate';
  const marker = kind === 'key' ? /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/ : /-----BEGIN CERTIFICATE-----/;
  if (!marker.test(text)) return `${option}: ${path} is not ${expected}`;
  try {
    if (kind === 'key') createPrivateKey(text);
    else new X509Certificate(text);
  } catch {
    // The parser's message is not echoed: it could quote the file.
    return `${option}: ${path} is not ${expected} (it does not parse)`;
  }
  return undefined;
}

/** The client certificate must be the key's (both already checked readable PEM). */
function pairProblem(options: TlsOptions): string[] {
  if (options.builderTlsCert === undefined || options.builderTlsKey === undefined) return [];
  const cert = new X509Certificate(readFileSync(options.builderTlsCert, 'utf8'));
  const key = createPrivateKey(readFileSync(options.builderTlsKey, 'utf8'));
  return cert.checkPrivateKey(key)
    ? []
    : ['--builder-tls-key (BUILDER_TLS_KEY_PATH) is not the key of the --builder-tls-cert certificate'];
}

/** Every problem of the TLS options, each naming its option (empty when they are consistent). */
export function builderTlsProblems(options: TlsOptions): string[] {
  const problems: string[] = [];
  const files: [string, string | undefined, Kind][] = [
    ['--builder-tls-ca (BUILDER_TLS_CA_PATH)', options.builderTlsCa, 'certificate'],
    ['--builder-tls-cert (BUILDER_TLS_CERT_PATH)', options.builderTlsCert, 'certificate'],
    ['--builder-tls-key (BUILDER_TLS_KEY_PATH)', options.builderTlsKey, 'key'],
  ];
  for (const [option, path, kind] of files) {
    const problem = path === undefined ? undefined : pemProblem(option, path, kind);
    if (problem !== undefined) problems.push(problem);
  }
  if (options.builderTlsCert !== undefined && options.builderTlsKey === undefined) {
    problems.push('--builder-tls-cert (BUILDER_TLS_CERT_PATH) is given without --builder-tls-key');
  }
  if (options.builderTlsKey !== undefined && options.builderTlsCert === undefined) {
    problems.push('--builder-tls-key (BUILDER_TLS_KEY_PATH) is given without --builder-tls-cert');
  }
  if (problems.length === 0) problems.push(...pairProblem(options));
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
