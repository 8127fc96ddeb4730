/**
 * The bare floor under bench:redis's capture figures: the same command output moved with no service
 * code at all, once into a file (what the embedded store ends in) and once into a redis-server
 * (what Redis mode ends in: an RPUSH per 1 MiB element on a raw socket, no client library, no
 * masking). What separates these two is what moving bytes into Redis costs on this machine, whatever
 * the service does.
 */
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { once } from 'node:events';

const ELEMENT_BYTES = 1024 * 1024;
const bulk = (text: string): string => `$${Buffer.byteLength(text)}\r\n${text}\r\n`;
const command = (...words: string[]): string => `*${words.length}\r\n${words.map(bulk).join('')}`;

/** A raw RESP connection that counts its (one-line) replies; an error reply (`-...`) throws. */
class RawRedis {
  private replies = 0;
  private sent = 0;
  /** The next byte received begins a reply. */
  private atReply = true;
  private waiting: (() => void) | undefined;
  private problem: Error | undefined;

  private constructor(private readonly socket: Socket) {
    socket.on('data', (data: Buffer) => {
      for (const byte of data) {
        if (this.atReply && byte === 0x2d) this.problem ??= new Error('redis-server answered an error');
        this.atReply = byte === 0x0a;
        if (this.atReply) this.replies += 1;
      }
      if (this.replies >= this.sent || this.problem !== undefined) this.waiting?.();
    });
    socket.on('error', (err) => {
      this.problem = err;
      this.waiting?.();
    });
  }

  static async open(port: number, password: string): Promise<RawRedis> {
    const socket = connect(port, '127.0.0.1');
    await once(socket, 'connect');
    const raw = new RawRedis(socket);
    raw.send(command('AUTH', password));
    await raw.settled();
    return raw;
  }

  send(head: string, body?: Buffer): void {
    this.sent += 1;
    this.socket.cork();
    this.socket.write(head);
    if (body !== undefined) {
      this.socket.write(body);
      this.socket.write('\r\n');
    }
    this.socket.uncork();
  }

  async settled(): Promise<void> {
    while (this.replies < this.sent && this.problem === undefined)
      await new Promise<void>((resolve) => (this.waiting = resolve));
    if (this.problem !== undefined) throw this.problem;
  }

  close(): void {
    this.socket.destroy();
  }
}

export interface BareFloor {
  /** `cat output` into a file through a write stream; MB/s. */
  toFile(): Promise<number>;
  /** `cat output` into a Redis list, 1 MiB per RPUSH; MB/s. */
  toRedis(): Promise<number>;
  close(): void;
}

export async function bareFloor(
  output: string,
  bytes: number,
  file: string,
  redis: { port: number; password: string },
): Promise<BareFloor> {
  const raw = await RawRedis.open(redis.port, redis.password);
  const key = 'bench:floor';
  const timed = async (into: (stdout: NodeJS.ReadableStream) => Promise<void>): Promise<number> => {
    const started = performance.now();
    const cat = spawn('cat', [output], { stdio: ['ignore', 'pipe', 'ignore'] });
    const exited = once(cat, 'close');
    await into(cat.stdout);
    await exited;
    return bytes / 1e6 / ((performance.now() - started) / 1000);
  };
  return {
    async toFile() {
      const mbs = await timed(async (stdout) => {
        const stream = createWriteStream(file);
        stdout.on('data', (chunk: Buffer) => stream.write(chunk));
        await once(stdout, 'end');
        await new Promise<void>((resolve) => stream.end(resolve));
      });
      await rm(file);
      return mbs;
    },
    async toRedis() {
      const mbs = await timed(async (stdout) => {
        let pending: Buffer[] = [];
        let length = 0;
        const push = (): void => {
          const element = pending.length === 1 ? (pending[0] as Buffer) : Buffer.concat(pending);
          raw.send(`*3\r\n${bulk('RPUSH')}${bulk(key)}$${element.length}\r\n`, element);
          pending = [];
          length = 0;
        };
        stdout.on('data', (chunk: Buffer) => {
          pending.push(chunk);
          length += chunk.length;
          if (length >= ELEMENT_BYTES) push();
        });
        await once(stdout, 'end');
        if (length > 0) push();
        await raw.settled();
      });
      raw.send(command('DEL', key));
      await raw.settled();
      return mbs;
    },
    close: () => raw.close(),
  };
}
