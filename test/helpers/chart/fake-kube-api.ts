// A Kubernetes API server small enough for `helm template --dry-run=server`: discovery of the kinds
// the chart renders, and GET of the Secrets a test seeds (what `lookup` reads); everything else is
// absent. On 127.0.0.1, with a kubeconfig file pointing at it.
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NAMESPACE, RELEASE } from './helm.js';

/** group/version -> [resource, kind] of what the chart renders. */
const RESOURCES: Record<string, [string, string][]> = {
  v1: [
    ['configmaps', 'ConfigMap'],
    ['secrets', 'Secret'],
    ['services', 'Service'],
  ],
  'apps/v1': [
    ['deployments', 'Deployment'],
    ['statefulsets', 'StatefulSet'],
  ],
  'networking.k8s.io/v1': [['networkpolicies', 'NetworkPolicy']],
  'policy/v1': [['poddisruptionbudgets', 'PodDisruptionBudget']],
  'cert-manager.io/v1': [['certificates', 'Certificate']],
};

export interface FakeKubeApi {
  kubeconfig: string;
  /** Paths of the object GETs received (`/api/v1/namespaces/builds/secrets/x`). */
  gets: string[];
  close: () => Promise<void>;
}

const send = (res: ServerResponse, code: number, body: unknown): void => {
  res.writeHead(code, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

function discovery(path: string): unknown {
  if (path === '/version') return { major: '1', minor: '33', gitVersion: 'v1.33.0' };
  if (path === '/api') return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] };
  if (path === '/apis') {
    const groups = Object.keys(RESOURCES)
      .filter((gv) => gv !== 'v1')
      .map((gv) => {
        const [name = '', version = ''] = gv.split('/');
        const v = { groupVersion: gv, version };
        return { name, versions: [v], preferredVersion: v };
      });
    return { kind: 'APIGroupList', apiVersion: 'v1', groups };
  }
  const gv = /^\/(?:api\/(v1)|apis\/([^/]+\/[^/]+))$/.exec(path)?.slice(1).find(Boolean);
  const resources = gv === undefined ? undefined : RESOURCES[gv];
  if (resources === undefined) return undefined;
  return {
    kind: 'APIResourceList',
    groupVersion: gv,
    resources: resources.map(([name, kind]) => ({
      name,
      singularName: '',
      namespaced: true,
      kind,
      verbs: ['get', 'list'],
    })),
  };
}

/** Seeds Secrets (name -> data of base64 values; `owned`: created by this release, so Helm adopts it). */
export async function startFakeKubeApi(
  secrets: {
    name: string;
    data: Record<string, string>;
    annotations?: Record<string, string>;
    owned?: boolean;
  }[],
): Promise<FakeKubeApi> {
  const gets: string[] = [];
  const byPath = new Map(
    secrets.map((s) => [
      `/api/v1/namespaces/${NAMESPACE}/secrets/${s.name}`,
      {
        kind: 'Secret',
        apiVersion: 'v1',
        metadata: {
          name: s.name,
          namespace: NAMESPACE,
          labels: s.owned === true ? { 'app.kubernetes.io/managed-by': 'Helm' } : {},
          annotations: {
            ...s.annotations,
            ...(s.owned === true
              ? { 'meta.helm.sh/release-name': RELEASE, 'meta.helm.sh/release-namespace': NAMESPACE }
              : {}),
          },
        },
        type: 'Opaque',
        data: s.data,
      },
    ]),
  );
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://fake').pathname;
    const found = discovery(path);
    if (found !== undefined) return send(res, 200, found);
    if (path.endsWith('/secrets'))
      return send(res, 200, { kind: 'SecretList', apiVersion: 'v1', metadata: {}, items: [] });
    gets.push(path);
    const object = byPath.get(path);
    if (object !== undefined) return send(res, 200, object);
    send(res, 404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  const dir = mkdtempSync(join(tmpdir(), 'ibs-fake-kube-'));
  const kubeconfig = join(dir, 'config');
  writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'fake', cluster: { server: `http://127.0.0.1:${port}` } }],
      users: [{ name: 'fake', user: { token: 'fake' } }],
      contexts: [{ name: 'fake', context: { cluster: 'fake', user: 'fake', namespace: NAMESPACE } }],
      'current-context': 'fake',
    }),
    { mode: 0o600 },
  );
  return {
    kubeconfig,
    gets,
    close: async () => {
      server.close();
      await once(server, 'close');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
