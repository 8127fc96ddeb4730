// Checks rendered chart documents the way a Kubernetes API server (and its controllers) would, with
// no cluster: each document against Kubernetes' own OpenAPI schemas as kubernetes-models compiles
// them (plus the Prometheus Operator and cert-manager models), fields the schema does not know
// (strict field validation), names (DNS-1123, label keys and values, port names), CIDRs, and label
// selectors that must select the pods, Services and ports of the same rendering.
import { isIP } from 'node:net';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { StatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import { PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';
import { Certificate } from '@kubernetes-models/cert-manager/cert-manager.io/v1/Certificate';
import { Issuer } from '@kubernetes-models/cert-manager/cert-manager.io/v1/Issuer';
import type { K8sObject } from './helm.js';

export type IssueKind = 'schema' | 'unknown-field' | 'name' | 'cidr' | 'selector';

export interface Issue {
  /** `Kind/name` of the document. */
  document: string;
  kind: IssueKind;
  /** JSON pointer inside the document. */
  path: string;
  message: string;
}

interface AjvError {
  instancePath: string;
  keyword: string;
  message?: string;
  params?: Record<string, unknown>;
}
type Validator = (data: unknown) => AjvError[];

/** A model class's validate, as the list of ajv errors (none: valid). */
function validatorOf(model: new (data?: never) => { validate: () => void }): Validator {
  return (data) => {
    try {
      new model(data as never).validate();
      return [];
    } catch (error) {
      const errors = (error as { errors?: AjvError[] }).errors;
      if (errors === undefined) throw error;
      return errors;
    }
  };
}

/** The schema of each `apiVersion/kind` the chart may render; any other is an issue itself. */
const SCHEMAS = new Map<string, Validator>(
  (
    [
      ['v1/ConfigMap', ConfigMap],
      ['v1/Secret', Secret],
      ['v1/Service', Service],
      ['apps/v1/Deployment', Deployment],
      ['apps/v1/StatefulSet', StatefulSet],
      ['networking.k8s.io/v1/NetworkPolicy', NetworkPolicy],
      ['networking.k8s.io/v1/Ingress', Ingress],
      ['policy/v1/PodDisruptionBudget', PodDisruptionBudget],
      ['monitoring.coreos.com/v1/ServiceMonitor', ServiceMonitor],
      ['monitoring.coreos.com/v1/PrometheusRule', PrometheusRule],
      ['cert-manager.io/v1/Certificate', Certificate],
      ['cert-manager.io/v1/Issuer', Issuer],
    ] as [string, new (data?: never) => { validate: () => void }][]
  ).map(([key, model]) => [key, validatorOf(model)]),
);

type Json = Record<string, unknown>;
const isMap = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const pointer = (path: string, key: string | number): string =>
  `${path}/${String(key).replace(/~/g, '~0').replace(/\//g, '~1')}`;
const documentName = (o: K8sObject): string => `${o.kind}/${o.metadata?.name ?? '?'}`;

/** The node at a JSON pointer (`` is the root). */
function nodeAt(root: unknown, path: string): unknown {
  if (path === '') return root;
  return path
    .slice(1)
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>(
      (node, key) => (isMap(node) || Array.isArray(node) ? (node as Json)[key] : undefined),
      root,
    );
}

/** A value no typed schema accepts: where it passes, the schema does not look at the field. */
const PROBE = Symbol('probe');

/**
 * Fields the schema does not know, as `kubectl apply --validate=strict` refuses them: a field is
 * known when putting a value of no JSON type in its place makes the schema complain about it.
 * Free-form nodes (a schema that accepts anything there) are not looked into.
 */
function unknownFields(doc: Json, validate: Validator): string[] {
  const found: string[] = [];
  const complainsAt = (path: string): boolean => {
    const copy = structuredClone(doc);
    const slash = path.lastIndexOf('/');
    const parent = nodeAt(copy, path.slice(0, slash)) as Json;
    parent[
      path
        .slice(slash + 1)
        .replace(/~1/g, '/')
        .replace(/~0/g, '~')
    ] = PROBE;
    return validate(copy).some((e) => e.instancePath === path || e.instancePath.startsWith(`${path}/`));
  };
  const walk = (node: unknown, path: string): void => {
    if (Array.isArray(node)) {
      node.forEach((item, i) => walk(item, pointer(path, i)));
      return;
    }
    if (!isMap(node)) return;
    if (path !== '' && !complainsAt(path)) return; // free-form
    for (const [key, value] of Object.entries(node)) {
      const at = pointer(path, key);
      if (path === '' && (key === 'apiVersion' || key === 'kind')) continue;
      if (!complainsAt(at)) found.push(at);
      else walk(value, at);
    }
  };
  walk(doc, '');
  return found;
}

// --- names ---------------------------------------------------------------------------------------
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;

const label = (v: string): string | undefined =>
  v.length <= 63 && DNS1123_LABEL.test(v) ? undefined : 'must be a DNS-1123 label (a-z, 0-9, -; at most 63)';
const subdomain = (v: string): string | undefined =>
  v.length <= 253 && DNS1123_SUBDOMAIN.test(v) ? undefined : 'must be a DNS-1123 subdomain';
const dns1035 = (v: string): string | undefined =>
  v.length <= 63 && DNS1035_LABEL.test(v) ? undefined : 'must be a DNS-1035 label (starting with a letter)';
function qualifiedName(v: string): string | undefined {
  const parts = v.split('/');
  if (parts.length > 2) return 'must be a qualified name ([prefix/]name)';
  const name = parts.at(-1) ?? '';
  if (parts.length === 2 && subdomain(parts[0] ?? '') !== undefined)
    return 'has a prefix that is no DNS-1123 subdomain';
  return name.length <= 63 && QUALIFIED_NAME.test(name) ? undefined : 'must be a qualified name';
}
const labelValue = (v: unknown): string | undefined =>
  typeof v === 'string' && v.length <= 63 && LABEL_VALUE.test(v) ? undefined : 'is no valid label value';
/** IANA_SVC_NAME: a container port name. */
const portName = (v: string): string | undefined =>
  v.length <= 15 && DNS1123_LABEL.test(v) && /[a-z]/.test(v) && !v.includes('--')
    ? undefined
    : 'must be an IANA service name (at most 15 of a-z, 0-9, -, a letter among them)';

function nameIssues(o: K8sObject, add: (path: string, message: string, kind: IssueKind) => void): void {
  const check = (path: string, value: unknown, rule: (v: string) => string | undefined): void => {
    const problem = typeof value === 'string' ? rule(value) : 'must be a string';
    if (problem !== undefined) add(path, `${JSON.stringify(value)} ${problem}`, 'name');
  };
  const mapKeys = (path: string, map: unknown, values: boolean): void => {
    if (!isMap(map)) return;
    for (const [key, value] of Object.entries(map)) {
      check(pointer(path, key), key, qualifiedName);
      if (values) {
        const problem = labelValue(value);
        if (problem !== undefined) add(pointer(path, key), `${JSON.stringify(value)} ${problem}`, 'name');
      }
    }
  };
  check('/metadata/name', o.metadata?.name, o.kind === 'Service' ? dns1035 : subdomain);
  mapKeys('/metadata/labels', o.metadata?.labels, true);
  mapKeys('/metadata/annotations', o.metadata?.annotations, false);
  const spec = (o.spec ?? {}) as Json;
  if (o.kind === 'ConfigMap' || o.kind === 'Secret') {
    for (const field of ['data', 'stringData', 'binaryData']) {
      for (const key of Object.keys(((o as Json)[field] ?? {}) as Json))
        check(pointer(`/${field}`, key), key, (k) =>
          k.length <= 253 && CONFIG_KEY.test(k) ? undefined : 'is no valid key',
        );
    }
  }
  if (o.kind === 'Service') {
    ((spec.ports ?? []) as Json[]).forEach((p, i) => {
      if (p.name !== undefined) check(`/spec/ports/${i}/name`, p.name, label);
    });
  }
  for (const [selectorPath, selector] of selectorsOf(o))
    mapKeys(`${selectorPath}/matchLabels`, selector.matchLabels, true);
  if (o.kind === 'Service') mapKeys('/spec/selector', spec.selector, true);
  const template = spec.template as Json | undefined;
  if (template !== undefined) {
    mapKeys('/spec/template/metadata/labels', (template.metadata as Json | undefined)?.labels, true);
    mapKeys(
      '/spec/template/metadata/annotations',
      (template.metadata as Json | undefined)?.annotations,
      false,
    );
    const pod = (template.spec ?? {}) as Json;
    for (const field of ['initContainers', 'containers']) {
      ((pod[field] ?? []) as Json[]).forEach((c, i) => {
        const at = `/spec/template/spec/${field}/${i}`;
        check(`${at}/name`, c.name, label);
        ((c.ports ?? []) as Json[]).forEach((p, j) => {
          if (p.name !== undefined) check(`${at}/ports/${j}/name`, p.name, portName);
        });
        ((c.volumeMounts ?? []) as Json[]).forEach((m, j) =>
          check(`${at}/volumeMounts/${j}/name`, m.name, label),
        );
      });
    }
    ((pod.volumes ?? []) as Json[]).forEach((v, i) =>
      check(`/spec/template/spec/volumes/${i}/name`, v.name, label),
    );
  }
  ((spec.volumeClaimTemplates ?? []) as Json[]).forEach((t, i) =>
    check(`/spec/volumeClaimTemplates/${i}/metadata/name`, (t.metadata as Json | undefined)?.name, label),
  );
}

// --- CIDRs ---------------------------------------------------------------------------------------
interface Cidr {
  family: 4 | 6;
  bits: bigint;
  prefix: number;
}
function parseCidr(text: unknown): Cidr | undefined {
  if (typeof text !== 'string') return undefined;
  const m = /^([^/]+)\/(\d{1,3})$/.exec(text);
  if (m === null) return undefined;
  const family = isIP(m[1] ?? '');
  const prefix = Number(m[2]);
  if (family === 0 || prefix > (family === 4 ? 32 : 128)) return undefined;
  const address = m[1] ?? '';
  let bits = 0n;
  if (family === 4) for (const part of address.split('.')) bits = (bits << 8n) | BigInt(part);
  else {
    const [head = '', tail = ''] = address.split('::');
    const groups = (s: string): string[] => (s === '' ? [] : s.split(':'));
    const h = groups(head);
    const t = address.includes('::') ? groups(tail) : [];
    const all = [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
    for (const g of all) bits = (bits << 16n) | BigInt(`0x${g}`);
  }
  return { family: family as 4 | 6, bits, prefix };
}
const contains = (outer: Cidr, inner: Cidr): boolean => {
  const width = BigInt(outer.family === 4 ? 32 : 128);
  const shift = width - BigInt(outer.prefix);
  return (
    outer.family === inner.family &&
    inner.prefix > outer.prefix &&
    outer.bits >> shift === inner.bits >> shift
  );
};

/** Every ipBlock (NetworkPolicy peers) and a Service's loadBalancerSourceRanges. */
function cidrIssues(o: K8sObject, add: (path: string, message: string, kind: IssueKind) => void): void {
  const walk = (node: unknown, path: string): void => {
    if (Array.isArray(node)) node.forEach((n, i) => walk(n, pointer(path, i)));
    if (!isMap(node)) return;
    for (const [key, value] of Object.entries(node)) {
      if (key === 'ipBlock' && isMap(value)) {
        const cidr = parseCidr(value.cidr);
        if (cidr === undefined)
          add(`${path}/ipBlock/cidr`, `${JSON.stringify(value.cidr)} is no CIDR`, 'cidr');
        ((value.except ?? []) as unknown[]).forEach((e, i) => {
          const inner = parseCidr(e);
          if (inner === undefined)
            add(`${path}/ipBlock/except/${i}`, `${JSON.stringify(e)} is no CIDR`, 'cidr');
          else if (cidr !== undefined && !contains(cidr, inner))
            add(
              `${path}/ipBlock/except/${i}`,
              `${JSON.stringify(e)} is not inside ${String(value.cidr)}`,
              'cidr',
            );
        });
      } else if (key === 'loadBalancerSourceRanges' && Array.isArray(value)) {
        value.forEach((r, i) => {
          if (parseCidr(r) === undefined)
            add(pointer(`${path}/${key}`, i), `${JSON.stringify(r)} is no CIDR`, 'cidr');
        });
      } else walk(value, pointer(path, key));
    }
  };
  walk(o, '');
}

// --- selectors -----------------------------------------------------------------------------------
interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}
function selects(selector: LabelSelector, labels: Record<string, string>): boolean {
  const byLabels = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  const byExpressions = (selector.matchExpressions ?? []).every((e) => {
    const has = e.key in labels;
    const value = labels[e.key] ?? '';
    switch (e.operator) {
      case 'In':
        return has && (e.values ?? []).includes(value);
      case 'NotIn':
        return !has || !(e.values ?? []).includes(value);
      case 'Exists':
        return has;
      case 'DoesNotExist':
        return !has;
      default:
        return false;
    }
  });
  return byLabels && byExpressions;
}
const isEmptySelector = (s: LabelSelector): boolean =>
  Object.keys(s.matchLabels ?? {}).length === 0 && (s.matchExpressions ?? []).length === 0;

/** The label selectors of a document that must select pods, by path. */
function selectorsOf(o: K8sObject): [string, LabelSelector][] {
  const spec = (o.spec ?? {}) as Json;
  const out: [string, LabelSelector][] = [];
  if (
    ['Deployment', 'StatefulSet', 'PodDisruptionBudget', 'ServiceMonitor'].includes(o.kind) &&
    isMap(spec.selector)
  )
    out.push(['/spec/selector', spec.selector as LabelSelector]);
  if (o.kind === 'NetworkPolicy') {
    if (isMap(spec.podSelector)) out.push(['/spec/podSelector', spec.podSelector as LabelSelector]);
    ((spec.ingress ?? []) as Json[]).forEach((rule, i) =>
      ((rule.from ?? []) as Json[]).forEach((peer, j) => {
        if (isMap(peer.podSelector))
          out.push([`/spec/ingress/${i}/from/${j}/podSelector`, peer.podSelector as LabelSelector]);
      }),
    );
  }
  const pod = ((spec.template as Json | undefined)?.spec ?? {}) as Json;
  ((pod.topologySpreadConstraints ?? []) as Json[]).forEach((c, i) => {
    if (isMap(c.labelSelector))
      out.push([
        `/spec/template/spec/topologySpreadConstraints/${i}/labelSelector`,
        c.labelSelector as LabelSelector,
      ]);
  });
  return out;
}

const podLabels = (o: K8sObject): Record<string, string> | undefined =>
  ((o.spec as Json | undefined)?.template as { metadata?: { labels?: Record<string, string> } } | undefined)
    ?.metadata?.labels;

function selectorIssues(
  o: K8sObject,
  all: K8sObject[],
  add: (path: string, message: string, kind: IssueKind) => void,
): void {
  const pods = all.map(podLabels).filter((l): l is Record<string, string> => l !== undefined);
  const services = all.filter((d) => d.kind === 'Service');
  const spec = (o.spec ?? {}) as Json;
  const own = podLabels(o);
  for (const [path, selector] of selectorsOf(o)) {
    if (o.kind === 'ServiceMonitor') {
      const matched = services.filter((s) => selects(selector, s.metadata.labels ?? {}));
      if (matched.length === 0) add(path, 'selects no Service of the chart', 'selector');
      const ports = new Set(matched.flatMap((s) => ((s.spec as Json).ports as Json[]).map((p) => p.name)));
      ((spec.endpoints ?? []) as Json[]).forEach((e, i) => {
        if (typeof e.port === 'string' && !ports.has(e.port))
          add(`/spec/endpoints/${i}/port`, `names no port of the selected Service(s): ${e.port}`, 'selector');
      });
      continue;
    }
    // A workload's selector and its spread constraints select its own pods (the API server refuses otherwise).
    const ownPods = path === '/spec/selector' || path.includes('topologySpreadConstraints');
    if (own !== undefined && ownPods) {
      if (!selects(selector, own)) add(path, "does not select the template's pod labels", 'selector');
    } else if (isEmptySelector(selector)) {
      continue; // every pod (of the namespace)
    } else if (!pods.some((labels) => selects(selector, labels))) {
      add(path, 'selects no pod of the chart', 'selector');
    }
  }
  if (o.kind === 'Service' && isMap(spec.selector)) {
    const selector = { matchLabels: spec.selector as Record<string, string> };
    const matched = all.filter((d) => {
      const labels = podLabels(d);
      return labels !== undefined && selects(selector, labels);
    });
    if (matched.length === 0) add('/spec/selector', 'selects no pod of the chart', 'selector');
    // A named target port must be a container port of the selected pods.
    const names = new Set(
      matched.flatMap((d) =>
        ((((d.spec as Json).template as Json).spec as Json).containers as Json[]).flatMap((c) =>
          ((c.ports ?? []) as Json[]).map((p) => p.name),
        ),
      ),
    );
    ((spec.ports ?? []) as Json[]).forEach((p, i) => {
      if (typeof p.targetPort === 'string' && matched.length > 0 && !names.has(p.targetPort))
        add(
          `/spec/ports/${i}/targetPort`,
          `names no container port of the selected pods: ${p.targetPort}`,
          'selector',
        );
    });
  }
  if (
    o.kind === 'StatefulSet' &&
    typeof spec.serviceName === 'string' &&
    !services.some((s) => s.metadata.name === spec.serviceName)
  )
    add('/spec/serviceName', `names no Service of the chart: ${spec.serviceName}`, 'selector');
  if (o.kind === 'Ingress') {
    ((spec.rules ?? []) as Json[]).forEach((rule, i) =>
      ((((rule.http ?? {}) as Json).paths ?? []) as Json[]).forEach((p, j) => {
        const backend = (p.backend as Json | undefined)?.service as
          { name: string; port: { name?: string; number?: number } } | undefined;
        if (backend === undefined) return;
        const service = services.find((s) => s.metadata.name === backend.name);
        const at = `/spec/rules/${i}/http/paths/${j}/backend/service`;
        if (service === undefined)
          add(`${at}/name`, `names no Service of the chart: ${backend.name}`, 'selector');
        else {
          const ports = (service.spec as Json).ports as Json[];
          if (!ports.some((sp) => sp.name === backend.port.name || sp.port === backend.port.number))
            add(`${at}/port`, 'names no port of the Service', 'selector');
        }
      }),
    );
  }
}

/** Every issue of the rendered documents, in the order found. */
export function validateDocuments(all: K8sObject[]): Issue[] {
  const issues: Issue[] = [];
  for (const o of all) {
    const add = (path: string, message: string, kind: IssueKind): void => {
      issues.push({ document: documentName(o), kind, path, message });
    };
    const validate = SCHEMAS.get(`${o.apiVersion}/${o.kind}`);
    if (validate === undefined) {
      add('', `no Kubernetes schema known for ${o.apiVersion} ${o.kind}`, 'schema');
      continue;
    }
    const errors = validate(o);
    for (const e of errors) {
      const detail = e.params === undefined ? '' : ` ${JSON.stringify(e.params)}`;
      add(e.instancePath, `${e.keyword}: ${e.message ?? ''}${detail}`, 'schema');
    }
    for (const path of unknownFields(o as Json, validate)) add(path, 'unknown field', 'unknown-field');
    nameIssues(o, add);
    cidrIssues(o, add);
    selectorIssues(o, all, add);
  }
  return issues;
}
