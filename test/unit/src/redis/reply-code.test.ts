// Redis error replies told apart by their code (the first word of the reply), never by their prose.
import test from 'ava';
import { ReplyError } from 'ioredis';
import { replyCode } from '../../../../src/redis/reply-code.js';

const reply = (text: string): Error => new (ReplyError as unknown as new (message: string) => Error)(text);

test('an error reply is told by its code, its first word', (t) => {
  t.is(replyCode(reply("OOM command not allowed when used memory > 'maxmemory'.")), 'OOM');
  t.is(replyCode(reply('NOSCRIPT No matching script. Please use EVAL.')), 'NOSCRIPT');
  t.is(replyCode(reply('READONLY')), 'READONLY');
});

test('anything that is not a reply, or prose that only mentions a code, has none', (t) => {
  t.is(replyCode(new Error('OOM command not allowed')), undefined);
  t.is(replyCode(reply('the server said OOM')), undefined);
  t.is(replyCode('OOM'), undefined);
  t.is(replyCode(undefined), undefined);
});
