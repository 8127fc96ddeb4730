/**
 * POSIX sh quoting, the one place for it: inside '...' every byte is literal except the quote
 * itself, which becomes '\''. Any text (quotes, $(), backticks, newlines) becomes one inert
 * word. Used for generated scripts (lifecycle scripts), GIT_SSH_COMMAND paths and the command
 * lines shown in messages. Pure.
 */
export const shellQuote = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`;

/** A word as a reader expects it in a printed command line: quoted only when it has to be. */
export const shellWord = (text: string): string =>
  text === '' || /[\s'"\\$`]/.test(text) ? shellQuote(text) : text;
