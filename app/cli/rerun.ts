#!/usr/bin/env node
import type { CliIo } from '../common/command.js';
import { describeCliFailure } from '../common/reportFailure.js';
/**
 * The `rerun` command line. Subcommands live in app/cli/commands/<name>.ts, each named in the
 * command map (app/cli/commandMap.ts), which loads one only when it runs: `--help` and `--version`
 * load no command and no SDK client. bin/rerun.js starts it: compiled (dist/app/cli/rerun.js) under
 * plain node when installed from the package, these sources under tsx in a checkout (`npx rerun`).
 * stdout carries a command's result (help, tables, JSON, READY/SUMMARY lines); progress and notes go
 * to stderr.
 */
import { registerCheckoutImports } from './checkoutImports.js';
import { runCli } from './dispatch.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
registerCheckoutImports();

const controller = new AbortController();
let firstSignalAt = 0;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    // One Ctrl+C can arrive twice: from the terminal (to the whole process group) and relayed by a
    // wrapper such as tsx or npm. Only a second press, a moment later, means "exit now".
    if (controller.signal.aborted && Date.now() - firstSignalAt < 1000) return;
    if (controller.signal.aborted) {
      process.stderr.write(`\nrerun: second ${signal}, exiting now.\n`);
      process.exit(130);
    }
    process.stderr.write(`\nrerun: ${signal} received, finishing (press Ctrl+C again to exit now)...\n`);
    firstSignalAt = Date.now();
    controller.abort();
  });
}

// stdout carries only what commands write through io.stdout (their results). Anything else written
// there (console.log, the JSON logs of a loaded handler) goes to stderr.
const writeStdout = process.stdout.write.bind(process.stdout);
process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;
const io: CliIo = {
  stdout: (line) => {
    writeStdout(`${line}\n`);
  },
  stderr: (text) => {
    process.stderr.write(text);
  },
  env: process.env,
  isTTY: Boolean(process.stderr.isTTY),
  columns: process.stdout.isTTY ? process.stdout.columns : undefined,
  stderrColumns: process.stderr.isTTY ? process.stderr.columns : undefined,
  signal: controller.signal,
};

let code: number;
try {
  code = await runCli(process.argv.slice(2), io);
} catch (error) {
  // Outside a command (runCli reports a command's own failures): said the same way.
  const where = process.env.AWS_ENDPOINT_URL || `AWS (${process.env.AWS_REGION || 'us-east-1'})`;
  process.stderr.write(`rerun: ${describeCliFailure(error, where).message}\n`);
  if (process.env.RERUN_DEBUG && error instanceof Error) process.stderr.write(`${error.stack}\n`);
  code = 1;
}
// Exit explicitly: a timed-out handler may still hold the event loop (see LocalRunner), and SDK
// sockets linger; stdout/stderr writes to pipes and files are synchronous on POSIX.
process.exit(code);
