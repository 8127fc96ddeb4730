import test from 'ava';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { request, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { OPTIONS } from '../../../src/config/options.js';
import { eventually } from '../../helpers/eventually.js';
import { isListening, spawnService } from '../../helpers/service-process.js';
import { freePort } from '../../stack/proc.js';

const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

test.serial('--version prints the package version and exits 0', async (t) => {
  const service = spawnService(['--version']);
  t.is(await service.exited, 0);
  t.is(service.stdout(), `${pkg.version}\n`);
});

test.serial(
  '--help lists every option with flag, env var, settings key and default, and exits 0',
  async (t) => {
    const service = spawnService(['--help', '--port', 'not-a-port']);
    t.is(await service.exited, 0);
    const help = service.stdout();
    for (const option of OPTIONS) {
      t.true(help.includes(option.flag), option.flag);
      t.true(help.includes(`env: ${option.env}`), option.env);
      t.true(help.includes(`settings: ${option.settingsKey ?? 'none'}`), option.name);
    }
  },
);

test.serial(
  'a misconfiguration prints every problem to stderr and exits 2 before binding the port',
  async (t) => {
    const port = await freePort();
    const service = spawnService(
      [
        '--port',
        String(port),
        '--builder-mode',
        'sometimes',
        '--clone-timeout',
        '0',
        '--error-tracking-dsn',
        'S3CRET-dsn',
      ],
      { SSH_HOST_KEY_POLICY: 'trust-me', MAX_CONCURRENT_BUILDS: 'four' },
    );
    let bound = false;
    let done = false;
    void service.exited.then(() => (done = true));
    // Watched until the process exits: the port must never be bound meanwhile.
    await eventually(
      async () => {
        if (await isListening(port)) bound = true;
        return done;
      },
      { timeout: 60_000, interval: 20, what: 'the service to exit' },
    );
    t.is(await service.exited, 2);
    t.false(bound, 'the port was never bound');
    const stderr = service.stderr();
    t.regex(stderr, /^configuration error:\n/);
    for (const re of [
      /--builder-mode: must be one of auto, never/,
      /--clone-timeout: must be >= 1/,
      /SSH_HOST_KEY_POLICY/,
      /MAX_CONCURRENT_BUILDS: must be an integer/,
      /--error-tracking-dsn: must be an http\(s\) URL/,
    ]) {
      t.regex(stderr, re);
    }
    t.false(stderr.includes('S3CRET'));
    t.false(service.stdout().includes('listening'));
  },
);

test.serial(
  'startup errors from files: bad extension, unknown key, malformed credentials entry, bad docker config',
  async (t) => {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'ibs-main-files-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'settings.yaml'), 'service:\n  port: 8080\n  hostname: x\n');
    writeFileSync(
      join(dir, 'creds.json'),
      JSON.stringify([{ host: 'git.example', kind: 'https', token: 'S3CRET-token' }]),
    );
    mkdirSync(join(dir, 'dc'));
    writeFileSync(join(dir, 'dc', 'config.json'), '{"auths": {"r": {"auth": "S3CRET"');
    writeFileSync(
      join(dir, 'prebuilds.json'),
      JSON.stringify([
        {
          repository: 'ftp://git.example/a.git',
          branches: ['main'],
          image: { registry: 'r.example', name: 'a' },
        },
      ]),
    );
    const cases: [string[], Record<string, string>, RegExp][] = [
      [
        ['--settings', join(dir, 'settings.toml')],
        {},
        /settings file .*settings\.toml: unsupported extension "\.toml"/,
      ],
      [['--settings', join(dir, 'settings.yaml')], {}, /unknown key "service\.hostname"/],
      [
        [],
        { GIT_CREDENTIALS_CONFIG_PATH: join(dir, 'creds.json') },
        /git credentials file .*: \[0\]: missing required key "username"/,
      ],
      [[], { DOCKER_CONFIG: join(dir, 'dc') }, /docker config .*config\.json: not valid JSON/],
      [[], { SERVICE_CONFIG_PATH: join(dir, 'absent.json') }, /cannot be read \(ENOENT\)/],
      [
        [],
        { PREBUILD_CONFIGURATIONS_PATH: join(dir, 'prebuilds.json') },
        /prebuild configuration 0 \(ftp:\/\/git\.example\/a\.git\): .*ftp/,
      ],
    ];
    for (const [args, env, re] of cases) {
      const service = spawnService(['--port', String(port), ...args], env);
      t.is(await service.exited, 2, re.source);
      t.regex(service.stderr(), re);
      t.false(service.stderr().includes('S3CRET'));
      t.false(service.stdout().includes('listening'));
    }
    t.false(await isListening(port));
  },
);

test.serial('a port already in use fails the start (exit 1, logged)', async (t) => {
  const { createServer } = await import('node:net');
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, resolve));
  t.teardown(() => blocker.close());
  const address = blocker.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const service = spawnService(['--port', String(port)]);
  t.is(await service.exited, 1);
  t.truthy(service.lines().find((l) => l.msg === 'cannot listen' && l.port === port));
});

async function started(args: string[], env: Record<string, string> = {}) {
  const service = spawnService(['--port', '0', ...args], env);
  const line = await service.waitForLog('listening');
  return { service, port: line.port as number, url: `http://127.0.0.1:${String(line.port)}` };
}

test.serial(
  'the service starts, logs its startup line and answers with the loaded configuration',
  async (t) => {
    const { service, url } = await started(
      ['--builder-endpoint', 'tcp://127.0.0.1:1', '--build-platforms', 'linux/amd64'],
      {
        SERVICE_NAME: 'svc-main',
        DEPLOYMENT_ENVIRONMENT: 'staging',
      },
    );
    t.teardown(() => service.child.kill('SIGKILL'));
    const startup = await fetch(`${url}/health/startup`);
    t.deepEqual(await startup.json(), { status: 'started' });
    t.is((await fetch(`${url}/health/ready`)).status, 200);
    const view = (await (await fetch(`${url}/config`)).json()) as Record<string, unknown>;
    t.is(view.builderConfigured, true);
    t.deepEqual(view.defaultPlatforms, ['linux/amd64']);
    const line = service.lines().find((l) => l.msg === 'listening');
    t.like(line, {
      'service.name': 'svc-main',
      'deployment.environment.name': 'staging',
      version: pkg.version,
    });
    service.child.kill('SIGTERM');
    t.is(await service.exited, 0);
  },
);

/** Each row of /proc/net/tcp and tcp6 (loopback IPv4 and the dual-stack listener's side). */
function tcpRows(): string[][] {
  return ['/proc/net/tcp', '/proc/net/tcp6'].flatMap((file) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .slice(1)
      .map((line) => line.trim().split(/\s+/))
      .filter((row) => row.length > 4),
  );
}

/**
 * The service has read all the client sent on the connection from `clientPort`: the client's send
 * queue is empty (acknowledged) and so is the service side's receive queue (node read it, and its
 * HTTP parser with it). The kernel's own view: no timing guess.
 */
function readByService(servicePort: number, clientPort: number): boolean {
  const ESTABLISHED = '01';
  const portOf = (address: string | undefined) => Number.parseInt(address?.split(':')[1] ?? '', 16);
  const queues = (row: string[]) => (row[4] ?? '').split(':').map((hex) => Number.parseInt(hex, 16));
  const rows = tcpRows().filter((row) => row[3] === ESTABLISHED);
  const side = (from: number, to: number) => rows.find((r) => portOf(r[1]) === from && portOf(r[2]) === to);
  const client = side(clientPort, servicePort);
  const service = side(servicePort, clientPort);
  return client !== undefined && service !== undefined && queues(client)[0] === 0 && queues(service)[1] === 0;
}

/** A POST whose body is still streaming: the request is in flight until `finish()`. */
function slowPost(port: number, path: string) {
  const req = request({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path,
    headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
  });
  const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req.once('response', (res: IncomingMessage) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      res.once('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.once('error', reject);
    });
    req.once('error', reject);
  });
  const clientPort = new Promise<number>((resolve) =>
    req.once('socket', (socket) => socket.once('connect', () => resolve(socket.localPort ?? 0))),
  );
  req.write('{"repository": ');
  req.flushHeaders();
  /** Resolves once the service has read the headers and the body's first chunk. */
  const arrived = async (): Promise<void> => {
    const from = await clientPort;
    await eventually(() => readByService(port, from), {
      what: `the service to read the request from port ${from}`,
    });
  };
  return { response, arrived, finish: () => req.end('""}'), abort: () => req.destroy() };
}

test.serial('SIGTERM: no new connections, the in-flight request completes, then exit 0', async (t) => {
  const { service, port, url } = await started([]);
  t.teardown(() => service.child.kill('SIGKILL'));
  // A keep-alive connection with no request in flight must not hold the shutdown.
  t.is((await fetch(`${url}/health/live`)).status, 200);
  const slow = slowPost(port, '/build');
  await slow.arrived();

  service.child.kill('SIGTERM');
  await service.waitForLog('shutting down: not accepting connections, letting in-flight requests finish');
  await eventually(async () => !(await isListening(port)), { what: 'the listener to close' });
  t.false(await isListening(port), 'new connections are refused');
  t.is(service.child.exitCode, null, 'still running while a request is in flight');

  slow.finish();
  const { status, body } = await slow.response;
  t.true(status >= 400 && status < 600, `status ${status}`);
  t.is(typeof (JSON.parse(body) as { error?: unknown }).error, 'string');
  t.is(await service.exited, 0);
  t.truthy(service.lines().find((l) => l.msg === 'stopped' && l.exitCode === 0));
});

test.serial('SIGINT without requests in flight exits 0 at once', async (t) => {
  const { service } = await started([]);
  t.teardown(() => service.child.kill('SIGKILL'));
  const before = Date.now();
  service.child.kill('SIGINT');
  t.is(await service.exited, 0);
  t.true(Date.now() - before < 60_000, 'not the 290 s grace');
});

test.serial('a second signal forces the exit (non-zero) while a request is still in flight', async (t) => {
  const { service, port } = await started([]);
  t.teardown(() => service.child.kill('SIGKILL'));
  const slow = slowPost(port, '/build');
  slow.response.catch(() => undefined);
  await slow.arrived();
  service.child.kill('SIGTERM');
  await service.waitForLog('shutting down: not accepting connections, letting in-flight requests finish');
  service.child.kill('SIGTERM');
  const code = await service.exited;
  t.not(code, 0);
  t.truthy(
    service
      .lines()
      .find(
        (l) => l.msg === 'shutdown forced: killing running commands' && l.reason === 'second signal SIGTERM',
      ),
  );
  slow.abort();
});

test.serial('the end of the grace period forces the exit (non-zero)', async (t) => {
  const { service, port } = await started(['--shutdown-grace-seconds', '1']);
  t.teardown(() => service.child.kill('SIGKILL'));
  const slow = slowPost(port, '/build');
  slow.response.catch(() => undefined);
  await slow.arrived();
  const before = Date.now();
  service.child.kill('SIGTERM');
  const code = await service.exited;
  const took = Date.now() - before;
  t.not(code, 0);
  t.true(took >= 1000 && took < 30_000, `took ${took} ms`); // never before the grace is over
  t.truthy(
    service
      .lines()
      .find((l) => l.msg === 'shutdown forced: killing running commands' && l.reason === 'grace period over'),
  );
  slow.abort();
});
