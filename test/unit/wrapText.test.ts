import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../app/cli/commandMap.js';
import { commandHelp, globalHelp } from '../../app/cli/dispatch.js';
import { reflowParagraphs, wrapWords } from '../../app/cli/wrapText.js';

describe('help fitted to the terminal', () => {
  it('wraps words before the width, indenting continuation lines, and keeps a longer word whole', () => {
    expect(wrapWords('one two three', 7, '  ')).toEqual(['one two', '  three']);
    expect(wrapWords('a s3://bucket/a-very-long-key b', 10)).toEqual(['a', 's3://bucket/a-very-long-key', 'b']);
    expect(wrapWords('', 10)).toEqual(['']);
  });

  it('reflows prose paragraphs and keeps indented ones (examples) as written', () => {
    const text = 'A first\nparagraph of prose.\n\nExamples:\n  rerun ui      # kept\n  rerun status  # kept';
    expect(reflowParagraphs(text, 40)).toBe(
      'A first paragraph of prose.\n\nExamples:\n  rerun ui      # kept\n  rerun status  # kept',
    );
  });

  it('fits the list of commands in 80 columns', () => {
    const fitted = globalHelp(COMMANDS, 80);
    expect(fitted.split('\n').filter((l) => l.length > 79)).toEqual([]);
    expect(fitted.split(/\s+/)).toEqual(globalHelp(COMMANDS).split(/\s+/));
  });

  it('wraps each synopsis of a usage of several lines on its own, aligned under the first', async () => {
    const command = (await (COMMANDS.status as NonNullable<(typeof COMMANDS)['status']>).load()).command;
    expect(command.usage.split('\n').length).toBeGreaterThan(1);
    const lines = commandHelp(command, 80).split('\n');
    expect(lines[0]).toMatch(/^Usage: rerun status --from /);
    const second = lines.findIndex((l) => /^ {7}rerun status --stage /.test(l));
    expect(second).toBeGreaterThan(0);
    // The first synopsis's continuation lines sit between the two, indented further.
    expect(lines.slice(1, second).every((l) => /^ {4}\S/.test(l))).toBe(true);
  });

  it("fits every command's help in 80 columns, and leaves it as written without a terminal", async () => {
    for (const [name, entry] of Object.entries(COMMANDS)) {
      const { command } = await entry.load();
      const fitted = commandHelp(command, 80).split('\n');
      // Only an unbreakable run (a URL, a long example line kept as written) may pass 79 columns.
      const over = fitted.filter((l) => l.length > 79 && !/^\s/.test(l) && /\s/.test(l.trim()));
      expect(over, name).toEqual([]);
      // The same words, in the same order.
      const words = (t: string) => t.split(/\s+/).filter(Boolean);
      expect(words(fitted.join('\n')), name).toEqual(words(commandHelp(command)));
    }
  });
});
