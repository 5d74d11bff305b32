/** Debian's chromium (apt-get install chromium); playwright-core never downloads a browser. */
export const CHROMIUM = process.env.RERUN_CHROMIUM || '/usr/bin/chromium';

/** Headless in a container: no sandbox, no GPU, nothing fetched in the background. */
export const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
