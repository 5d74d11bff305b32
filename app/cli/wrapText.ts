/**
 * Help text fitted to a terminal's width. Pure.
 *
 * - {@link helpWidth}: the width to fit, from the terminal's columns.
 * - {@link wrapWords}: one line of words broken before `width`, continuation lines indented.
 * - {@link reflowParagraphs}: prose paragraphs (lines that start without a space) joined and wrapped
 *   again; indented lines (examples, lists) kept as written.
 */

/**
 * The width help text is fitted to in a terminal of `columns`: one less (a full line would wrap in
 * some terminals), at most 99, at least 40; undefined (the text as written) when not a terminal.
 *
 * @example
 * helpWidth(80); // 79
 */
export function helpWidth(columns: number | undefined): number | undefined {
  return columns === undefined ? undefined : Math.max(40, Math.min(columns, 100) - 1);
}

/**
 * Breaks a line of words into lines of at most `width` characters of text (a longer word stands on
 * its own line); each line after the first is prefixed by `indent`, which the width does not count.
 *
 * @example
 * wrapWords('one two three', 7, '  '); // ['one two', '  three']
 */
export function wrapWords(text: string, width: number, indent = ''): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  lines.push(line);
  return lines.map((l, i) => (i === 0 ? l : indent + l));
}

/**
 * Reflows a block of help text to `width`: each run of prose lines (lines that start with neither a
 * space nor a list mark) is joined and wrapped again; other lines (examples, lists, tables) are kept,
 * and a list item is wrapped with its continuation lines under its text.
 *
 * @example
 * reflowParagraphs('a long\nparagraph, e.g.\n  rerun ui   # kept', 80); // 'a long paragraph, e.g.\n  rerun ui   # kept'
 */
export function reflowParagraphs(text: string, width: number): string {
  const out: string[] = [];
  let prose: string[] = [];
  const flush = () => {
    if (prose.length > 0) out.push(...wrapWords(prose.join(' '), width));
    prose = [];
  };
  for (const line of text.split('\n')) {
    const item = /^(\s*)([-*]|\d+\.) /.exec(line);
    if (line.length > 0 && !/^\s/.test(line) && !item) {
      prose.push(line);
      continue;
    }
    flush();
    if (item && line.length > width) {
      const hang = ' '.repeat((item[0] ?? '').length);
      out.push(
        ...wrapWords(line.slice((item[1] ?? '').length), width - (item[1] ?? '').length, hang).map(
          (l) => `${item[1]}${l}`,
        ),
      );
    } else out.push(line);
  }
  flush();
  return out.join('\n');
}
