import { defineWindowTask } from '../../src/window/defineWindowTask.js';

/**
 * A daily task over one daily input (`in/dt=YYYY-MM-DD/...`) whose build does nothing: for tests of
 * how a window's inputs are read (the reads, not the task's output).
 *
 * @example
 * const task = dailyReadTask('out');
 */
export function dailyReadTask(bucket: string) {
  const daily = { kind: 'time', grain: 'daily', template: 'dt={yyyy}-{MM}-{dd}' } as const;
  return defineWindowTask({
    name: 'daily',
    codeVersion: 'daily@1',
    partitions: daily,
    inputs: [{ name: 'in', prefix: 'in/', partitions: daily }],
    output: { bucket, prefix: 'daily/', fileName: 'out.json' },
    build: async () => undefined,
  });
}
