import { describe, expect, it } from 'vitest';
import { ReprocessState, type ReprocessVerdict } from '../../app/reprocess/planReprocess.js';
import { verifyVerdicts } from '../../app/reprocess/verifyVerdicts.js';
import type { OutputHead } from '../../src/done/judgeOutput.js';
import { buildOutputMetadata } from '../../src/done/outputMetadata.js';

const source = { bucket: 'in', key: 'incoming/a.csv', etag: 'e1' };
const outputKey = 'normalized/in/incoming/a.csv.ndjson';
const quarantineKey = 'quarantine/in/incoming/a.csv.ndjson';

function current(): ReprocessVerdict {
  return {
    state: ReprocessState.CURRENT,
    inputKey: source.key,
    input: { key: source.key, etag: 'e1', size: 10, lastModified: 0 },
    outputKey,
    output: { key: outputKey, etag: 'o1', size: 20, lastModified: 1 },
    reason: 'output is newer than the input',
  } as ReprocessVerdict;
}

async function* one(verdict: ReprocessVerdict): AsyncGenerator<ReprocessVerdict> {
  yield verdict;
}

/** The output's HEAD: sealed multipart (or single-part) metadata that lists a quarantine side output. */
function outputHead(kind: 'single' | 'multipart'): OutputHead {
  const integrity =
    kind === 'single'
      ? ({ kind: 'sha256', sha256Base64: 'd=', bytes: 20 } as const)
      : ({ kind: 'sha256-parts', sha256Base64: 'd=', compositeBase64: 'c=', parts: 2, bytes: 20 } as const);
  return {
    etag: 'o1',
    contentLength: 20,
    checksumSHA256: 'd=',
    metadata: buildOutputMetadata({
      source,
      codeVersion: 'n@1',
      integrity,
      summary: { records: 3, quarantined: 1 },
      sideOutputs: { quarantine: 'q1' },
    }),
  };
}

async function verify(kind: 'single' | 'multipart', quarantine: OutputHead | undefined) {
  const heads: string[] = [];
  const verdicts: ReprocessVerdict[] = [];
  for await (const v of verifyVerdicts(one(current()), {
    inputBucket: 'in',
    codeVersion: 'n@1',
    head: async (key) => {
      heads.push(key);
      return key === outputKey ? outputHead(kind) : quarantine;
    },
    sideOutputKeys: () => ({ quarantine: quarantineKey }),
  })) {
    verdicts.push(v);
  }
  return { verdict: verdicts[0], heads };
}

describe('reprocess --verify checks the side objects an output lists', () => {
  for (const kind of ['single', 'multipart'] as const) {
    it(`${kind}-part output: current only while its listed quarantine is there with the listed ETag`, async () => {
      const intact = await verify(kind, { etag: 'q1', contentLength: 5, metadata: {} });
      expect(intact.verdict).toMatchObject({
        state: ReprocessState.CURRENT,
        reason: 'output is valid and current (verified)',
      });
      expect(intact.heads).toEqual([outputKey, quarantineKey]);

      const missing = await verify(kind, undefined);
      expect(missing.verdict).toMatchObject({
        state: ReprocessState.INVALID,
        reason: 'side output quarantine is missing',
        inputKey: source.key,
        outputKey,
      });

      const replaced = await verify(kind, { etag: 'q2', contentLength: 5, metadata: {} });
      expect(replaced.verdict).toMatchObject({
        state: ReprocessState.INVALID,
        reason: 'side output quarantine has ETag q2, the output lists q1',
      });
    });
  }
});
