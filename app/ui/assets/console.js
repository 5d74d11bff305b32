// The rerun console: plain DOM over the read-only JSON API of app/ui/consoleServer.ts. This module
// starts the page (its tabs, its header naming what it reads, the first days window) and reads it
// afresh when a stopped rerun dev answers again. The views are modules of their own: daysView.js
// (days, inputs, output) and queueViews.js (dead letters, live); consolePage.js holds what they share.

import { $, get, legend, showView, state, stopped, whenAnswering } from './consolePage.js';
import { loadDays, loadInputs, shiftWindow } from './daysView.js';
import { LIVE_KINDS, loadDeadLetters, pollLive } from './queueViews.js';

const STATUS_LEGEND = ['published', 'stale', 'incomplete', 'missing', 'invalid'];

/* ---------- Start ---------- */

async function start() {
  for (const tab of document.querySelectorAll('.tabs button')) {
    tab.addEventListener('click', () => showView(tab.dataset.view));
  }
  legend($('legend'), [...STATUS_LEGEND, 'undated']);
  legend($('live-legend'), LIVE_KINDS);
  $('prev').addEventListener('click', () => shiftWindow(-1));
  $('next').addEventListener('click', () => shiftWindow(1));
  $('refresh-days').addEventListener('click', () => loadDays());
  $('more-inputs').addEventListener('click', () => loadInputs());
  let overview;
  try {
    overview = await get('/api/overview');
  } catch (error) {
    if (!stopped(error)) $('target').textContent = error.message;
    return;
  }
  await begin(overview);
}

/** Shows the target and the first window, once the overview is read. */
async function begin(overview) {
  state.overview = overview;
  // A user's pipeline without a window stage: its days are counted, not judged.
  if (overview.stage?.kind === 'inputs') legend($('legend'), ['unjudged', 'undated']);
  const params = new URLSearchParams(location.hash.slice(1));
  state.from = params.get('from') || overview.window.from;
  state.to = params.get('to') || overview.window.to;
  showTarget(overview);
  await loadDays();
}

/** The header's line: what the page reads (a rerun dev, a stack or an app) and where. */
function showTarget(o) {
  const where =
    o.kind === 'dev'
      ? `rerun dev of app ${o.appName}${o.session ? ` (pid ${o.session.pid})` : ''}`
      : o.kind === 'stack'
        ? `stack ${o.stackName}`
        : o.appName;
  // A user's pipeline: the stage whose windows the days are (rerun's own summary needs no word).
  const days = o.stage
    ? o.stage.kind === 'window'
      ? ` · days of stage ${o.stage.name} (${o.codeVersion})`
      : ` · no window stage: days of ${o.stage.name}'s inputs, not judged`
    : '';
  $('target').textContent =
    `${where} · s3://${o.inputBucket}/${o.inputPrefix} → s3://${o.outputBucket} · ${o.where}${days}`;
}

/** Once a stopped rerun dev answers again: the page reads its open view afresh. */
function answered(overview) {
  const before = state.overview;
  const restarted = before?.session?.pid !== overview.session?.pid;
  if (restarted) {
    // Another rerun dev: its journal starts afresh, and what the old one showed is not its own.
    state.liveSeq = 0;
    $('outcomes').tBodies[0].replaceChildren();
  }
  if (!before) return begin(overview);
  state.overview = overview;
  showTarget(overview);
  if (state.view === 'days') loadDays();
  if (state.view === 'dead-letters') loadDeadLetters();
  if (state.view === 'live') pollLive();
}

whenAnswering(answered);
start();
