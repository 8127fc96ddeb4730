/**
 * POSIX sh single quoting: inside '...' every byte is literal except the quote itself,
 * which becomes '\''. Any text (quotes, $(), backticks, newlines) becomes one inert word.
 * Pure.
 */
export const shellQuote = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;
