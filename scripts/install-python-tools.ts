/**
 * Installs the named Python tools (moto, cfn-lint, ministack) into the project's `.venv/<tool>`
 * from their pinned `requirements/<tool>.txt`; a tool already installed at those pins costs nothing.
 * `.ci/run` calls it so that a fresh machine needs nothing preinstalled but Python 3.
 *
 * Usage: npx tsx scripts/install-python-tools.ts moto cfn-lint
 * Prints each tool's interpreter, one per line, on stdout.
 */
import { ensurePythonTool, PythonTool } from '../local/emulator/pythonEnvironment.js';

const known = Object.values(PythonTool) as string[];
const tools = process.argv.slice(2);
const unknown = tools.filter((t) => !known.includes(t));
if (tools.length === 0 || unknown.length > 0) {
  console.error(
    `usage: install-python-tools.ts ${known.join('|')} ...${unknown.length ? ` (unknown: ${unknown.join(', ')})` : ''}`,
  );
  process.exit(2);
}
for (const tool of tools) {
  console.log(await ensurePythonTool(tool as PythonTool));
}
