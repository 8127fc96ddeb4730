// A command framed in place sends the very bytes ioredis itself sends for the same command and
// arguments (its own Command class is the reference), without copying the argument.
import test from 'ava';
import { Command } from 'ioredis';
import { FRAME_HEAD_ROOM, FRAME_TAIL_ROOM, framedCommand } from '../../../../src/redis/framed-command.js';

function spaceWith(argument: Buffer, extra = 0): Buffer {
  const space = Buffer.alloc(FRAME_HEAD_ROOM + argument.length + FRAME_TAIL_ROOM + extra, 0x2a);
  argument.copy(space, FRAME_HEAD_ROOM);
  return space;
}

const cases: [string, string[], Buffer][] = [
  ['rpushx', ['ibs:log:img-00000000-0000-4000-8000-000000000000'], Buffer.from('line one\nline two\n')],
  ['rpushx', ['k'], Buffer.from('é, 日本, and a byte that is no character: \xff', 'latin1')],
  ['rpushx', ['k'], Buffer.alloc(0)],
  ['set', ['clé'], Buffer.alloc(70_000, 0x61)],
  ['lpush', ['a', 'b', 'c'], Buffer.from('x')],
];

for (const [name, leading, argument] of cases) {
  test(`${name} ${leading.join(' ')} + ${argument.length} bytes: the bytes ioredis sends`, (t) => {
    const space = spaceWith(argument, 5);
    const framed = framedCommand(name, leading, space, argument.length).toWritable({}) as Buffer;
    const reference = new Command(name, [...leading, argument]).toWritable({}) as Buffer;
    t.deepEqual(framed, reference);
    // A view of the caller's buffer: the argument was not copied.
    t.is(framed.buffer, space.buffer);
  });
}

test('a header that does not fit the room kept for it is refused', (t) => {
  const space = spaceWith(Buffer.from('x'));
  t.throws(() => framedCommand('rpushx', ['k'.repeat(FRAME_HEAD_ROOM)], space, 1), {
    instanceOf: RangeError,
  });
});

test('an argument longer than its space is refused', (t) => {
  const space = spaceWith(Buffer.from('x'));
  t.throws(() => framedCommand('rpushx', ['k'], space, 2), { instanceOf: RangeError });
});
