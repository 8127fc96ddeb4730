// The stack's two BuildKit builders, `a` and `b`: each is a dockerd of its own (own data root, so its
// own BuildKit cache) with a Linux bridge for RUN steps, and a bridge process that serves its BuildKit
// on a plain and on a mutual-TLS TCP port. Builder a keeps the names it had when it was the only one.
import crypto from 'node:crypto';
import path from 'node:path';
import type { Layout } from '../layout.js';
import type { PortName } from '../state.js';

export const BUILDER_IDS = ['a', 'b'] as const;
export type BuilderId = (typeof BUILDER_IDS)[number];

export interface Engine {
  id: BuilderId;
  /** dockerd's directory: data/, exec/ (short: unix socket paths), daemon.json, docker.sock. */
  dir: string;
  socket: string;
  /** Component and pid-file names. */
  dockerdName: string;
  bridgeName: string;
  /** The buildx remote builder in STACK_DOCKER_CONFIG. */
  buildxName: string;
  port: PortName;
  tlsPort: PortName;
}

export function engine(l: Layout, id: BuilderId): Engine {
  if (id === 'a')
    return {
      id,
      dir: l.docker,
      socket: l.dockerSocket,
      dockerdName: 'dockerd',
      bridgeName: 'builder',
      buildxName: 'ibs-stack',
      port: 'builder',
      tlsPort: 'builderTls',
    };
  return {
    id,
    dir: l.dockerB,
    socket: l.dockerSocketB,
    dockerdName: 'dockerd-b',
    bridgeName: 'builder-b',
    buildxName: 'ibs-stack-b',
    port: 'builderB',
    tlsPort: 'builderBTls',
  };
}

/** Each stack dir and builder gets its own Linux bridge (name <= 15 chars, /24 derived from the dir). */
export function linuxBridgeOf(l: Layout, id: BuilderId): { name: string; cidr: string } {
  const h = crypto.createHash('sha256').update(l.root).digest();
  const hex = h.toString('hex').slice(0, 8);
  if (id === 'a') return { name: `ibs${hex}`, cidr: `10.${200 + (h[4]! % 50)}.${h[5]!}.1/24` };
  return { name: `ibsb${hex}`, cidr: `10.${150 + (h[4]! % 50)}.${h[5]!}.1/24` };
}

export function execRoot(e: Engine): string {
  return path.join(e.dir, 'exec');
}
