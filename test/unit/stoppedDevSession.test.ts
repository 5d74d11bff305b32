import { describe, expect, it } from 'vitest';
import { stoppedDevSession } from '../../app/ui/stoppedDevSession.js';

const session = { appName: 'shop', pid: 4242, endpoint: 'http://127.0.0.1:40123' };

describe('stoppedDevSession: what the console says of a rerun dev that no longer answers', () => {
  it('names the session, says it stopped, and gives the command that starts it again', () => {
    const said = stoppedDevSession({ ...session, emulator: 'embedded' }, false);
    expect(said.message).toBe(
      'The rerun dev of app shop (pid 4242) at http://127.0.0.1:40123 has stopped: nothing answers there. ' +
        'Start it again with: rerun dev --app-name shop. This page keeps what it last showed, and reads again as ' +
        'soon as a rerun dev of shop answers.',
    );
    expect(said).toMatchObject({ restart: 'rerun dev --app-name shop', processRunning: false });
  });

  it('tells a running rerun dev whose embedded emulator died from one whose own emulator stopped', () => {
    expect(stoppedDevSession({ ...session, emulator: 'embedded' }, true).what).toBe(
      'The rerun dev of app shop (pid 4242) at http://127.0.0.1:40123 no longer answers, though its process still runs.',
    );
    expect(stoppedDevSession({ ...session, emulator: 'external' }, true).todo).toBe(
      'Start that emulator again, or stop rerun dev (Ctrl+C) and start it again with',
    );
  });

  it('never names an environment variable, whichever the case', () => {
    for (const emulator of ['embedded', 'external'] as const) {
      for (const running of [true, false]) {
        expect(stoppedDevSession({ ...session, emulator }, running).message).not.toMatch(/AWS_|\$|export /);
      }
    }
  });
});
