/**
 * One redis-server process of a test's own that can be killed and started again with the same
 * arguments (its config file; a cluster node's nodes.conf beside it): the nodes of the Redis
 * topologies that tests take down, fail over or stop whole and bring back.
 */
import { spawn, type ChildProcess } from 'node:child_process';

export class NodeProcess {
  #child: ChildProcess | undefined;
  #exited: Promise<void> = Promise.resolve();
  constructor(
    readonly port: number,
    readonly args: readonly string[],
  ) {}

  start(): void {
    const child = spawn('redis-server', [...this.args], { stdio: 'ignore' });
    this.#child = child;
    this.#exited = new Promise((resolve) => child.once('exit', () => resolve()));
  }

  /** SIGKILL (a crash or a lost machine); resolves once the process has exited. */
  async kill(): Promise<void> {
    this.#child?.kill('SIGKILL');
    await this.#exited;
  }
}
