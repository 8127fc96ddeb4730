// Where stdout and stderr meet: whole lines, output passing as it comes while one stream writes,
// the other stream's output waiting for an open line, and an open line that stops holding the log.
import test from 'ava';
import { createLineGate } from '../../../../src/exec/line-gate.js';
import { eventually } from '../../../helpers/eventually.js';

function gateWith(holdMs = 60_000) {
  const written: Buffer[] = [];
  const gate = createLineGate((bytes) => void written.push(Buffer.from(bytes)), holdMs);
  const b = (text: string): Buffer => Buffer.from(text);
  return { gate, b, text: () => Buffer.concat(written).toString('utf8'), writes: () => written.length };
}

test('one stream alone passes as it comes, open lines included (no copy, no delay)', (t) => {
  const { gate, b, text, writes } = gateWith();
  gate.write('stdout', b('Password: '));
  t.is(text(), 'Password: ');
  gate.write('stdout', b('half a line'));
  gate.write('stdout', b(' and more\nnext'));
  t.is(text(), 'Password: half a line and more\nnext');
  t.is(writes(), 3);
});

test("the other stream's output waits for an open line and goes right after its newline", (t) => {
  const { gate, b, text } = gateWith();
  gate.write('stdout', b('half'));
  gate.write('stderr', b('[err one]\n[err'));
  gate.write('stderr', b(' two]\n'));
  t.is(text(), 'half');
  // The newline comes with more output: the complete line, then the waiting lines, then the rest.
  gate.write('stdout', b(' line\nnext half'));
  t.is(text(), 'half line\n[err one]\n[err two]\nnext half');
  gate.write('stdout', b(' done\n'));
  t.is(text(), 'half line\n[err one]\n[err two]\nnext half done\n');
});

test('waiting output that ends inside a line holds the log in turn', (t) => {
  const { gate, b, text } = gateWith();
  gate.write('stdout', b('a'));
  gate.write('stderr', b('b'));
  gate.write('stdout', b('\nc'));
  // stderr's open line now holds the log; stdout's "c" waits for it.
  t.is(text(), 'a\nb');
  gate.write('stderr', b('\n'));
  t.is(text(), 'a\nb\nc');
});

test('an open line lets waiting output go after the hold time; end lets everything go', async (t) => {
  const { gate, b, text } = gateWith(50);
  gate.write('stdout', b('Password: '));
  gate.write('stderr', b('warning\n'));
  t.is(text(), 'Password: ');
  await eventually(() => text() !== 'Password: ', { timeout: 10_000, what: 'the held line to go' });
  t.is(text(), 'Password: warning\n');
  gate.write('stderr', b('open'));
  gate.write('stdout', b('x'));
  gate.end();
  t.is(text(), 'Password: warning\nopenx');
});

test('more than 1 MiB waiting lets it go at once', (t) => {
  const { gate, b, text } = gateWith();
  gate.write('stdout', b('open'));
  const line = `${'e'.repeat(1023)}\n`;
  for (let i = 0; i < 1025; i += 1) gate.write('stderr', b(line));
  t.true(text().startsWith(`open${line}`));
  t.is(text().length, 4 + 1025 * 1024);
});
