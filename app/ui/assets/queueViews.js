// The rerun console's queue views: Dead letters (each dead-letter queue with its failure records and
// the command that moves them back) and Live (every queue's depth, the runs of rerun reprocess and
// rerun backfill on this machine, the throughput chart and the outcomes as they happen).

import { $, el, formatAge, get, state, stopped, whenShown, whenStopped } from './consolePage.js';

export const LIVE_KINDS = ['processed', 'quarantined', 'skipped', 'failed', 'requeued'];
/** What fills each queue: a running backfill or reprocess shows here as its queue draining. */
const QUEUE_ROLES = {
  'normalize queue': 'uploads, reprocess, redrive',
  'summarize queue': 'summary tasks: backfill, daily schedule',
  'normalize DLQ': 'given up: see Dead letters',
  'summarize DLQ': 'given up: see Dead letters',
};

/* ---------- Dead letters ---------- */

export async function loadDeadLetters() {
  const target = $('dlqs');
  if (target.children.length === 0) target.replaceChildren(el('p', 'muted', 'Reading the failure records…'));
  const panels = [];
  // rerun's workers, then each window stage of a user's pipeline, by its stage name.
  for (const queue of ['normalize', 'summarize', ...(state.overview?.windowQueues ?? [])]) {
    try {
      panels.push(dlqPanel(await get('/api/dead-letters', { queue })));
    } catch (error) {
      if (stopped(error)) {
        // Keep the panels it showed; a first look says what happened instead of "Reading…".
        if (!target.querySelector('.panel')) target.replaceChildren(el('p', 'muted', 'Not read: see above.'));
        return;
      }
      const panel = el('div', 'panel');
      el('h2', '', `${queue} DLQ`, panel);
      el('p', 'error', error.message, panel);
      panels.push(panel);
    }
  }
  target.replaceChildren(...panels);
}

function dlqPanel(view) {
  const panel = el('div', 'panel');
  panel.dataset.queue = view.worker;
  if (view.stage) panel.dataset.stage = view.stage;
  const head = el('div', 'panel-head', undefined, panel);
  el(
    'h2',
    '',
    view.stage
      ? `${view.stage} dead-letter queue (window stage)`
      : `${view.objectStage ?? view.worker} dead-letter queue`,
    head,
  );
  el('span', 'muted small mono', view.dlqUrl, head);
  const stats = el('div', 'dlq-stats', undefined, panel);
  const stat = (label, value, name) => {
    const s = el('span', '', undefined, stats);
    s.dataset.stat = name;
    el('b', '', value, s);
    s.append(` ${label}`);
  };
  stat('messages', view.depth, 'depth');
  stat('in flight', view.inFlight, 'in-flight');
  stat(
    `failure record${view.letters.length === 1 ? '' : 's'}`,
    `${view.letters.length}${view.more ? '+' : ''}`,
    'records',
  );
  if (view.oldestFailureAgeSeconds !== undefined)
    stat('since the oldest failure', formatAge(view.oldestFailureAgeSeconds), 'oldest');
  const notes = el('ul', 'notes', undefined, panel);
  for (const note of view.notes) el('li', '', note, notes);
  if (view.letters.length === 0) {
    el(
      'p',
      'muted',
      view.depth + view.inFlight === 0 ? 'Empty: nothing to redrive.' : 'No failure record to show.',
      panel,
    );
    return panel;
  }
  const table = el('table', 'grid', undefined, panel);
  const hr = el('tr', '', undefined, el('thead', '', undefined, table));
  for (const h of ['Object', 'Receives', 'Failure record', 'Given up']) el('th', '', h, hr);
  const body = el('tbody', '', undefined, table);
  for (const letter of view.letters) {
    const row = el('tr', '', undefined, body);
    row.dataset.messageId = letter.messageId;
    el('td', 'key', letter.subject, row);
    el(
      'td',
      '',
      letter.maxReceiveCount ? `${letter.receiveCount} of ${letter.maxReceiveCount}` : letter.receiveCount,
      row,
    );
    el('td', 'why', letter.reason, row).title = `message ${letter.messageId}, recorded ${letter.failedAt}`;
    const verdict = el('td', '', undefined, row);
    if (letter.retryable) {
      el('span', 'pill retry verdict', 'receives ran out: may succeed after a fix', verdict);
    } else {
      el('span', 'pill doomed verdict', 'non-retryable', verdict).title =
        'The worker said no retry fixes it as it stands. rerun redrive --dry-run rechecks each message and keeps back those that would fail again.';
    }
  }
  const command = el('div', 'command', undefined, panel);
  el('span', 'muted', 'To move them back, after the fix:', command);
  el('code', 'redrive-command', view.command, command);
  return panel;
}

/* ---------- Live ---------- */

let liveTimer;

export async function pollLive() {
  clearTimeout(liveTimer);
  if (state.view !== 'live') return;
  try {
    const live = await get('/api/live', { after: state.liveSeq });
    renderQueues(live.queues);
    renderRuns(live.runs);
    const notes = $('live-notes');
    notes.replaceChildren();
    for (const note of live.notes) el('li', '', note, notes);
    if (live.feed) {
      $('live-note').textContent =
        live.from === 'dev'
          ? 'from the running rerun dev, as they happen'
          : "from the workers' log groups (CloudWatch Logs), as they are written";
      renderOutcomes(live.feed.outcomes);
      renderChart(live.feed);
      if (live.from === 'cloudwatch') {
        $('throughput-note').textContent +=
          ` · records, from the workers' metrics · ${live.feed.quarantinedEntries} entries quarantined`;
      }
      state.liveSeq = live.feed.seq;
    } else {
      $('live-note').textContent = 'Outcomes are not available for this target.';
      $('throughput-note').textContent = 'not available for this target';
    }
  } catch (error) {
    if (stopped(error)) return;
    $('live-note').textContent = `Could not read: ${error.message}`;
  }
  liveTimer = setTimeout(pollLive, 2000);
}

function renderQueues(queues) {
  const cards = $('queues');
  cards.replaceChildren();
  for (const q of queues) {
    const card = el('div', 'card', undefined, cards);
    card.dataset.queue = q.name;
    if (q.stage) card.dataset.stage = q.stage;
    el('div', 'name', q.name, card);
    el('div', 'big', q.visible, card);
    el('div', 'sub', `waiting · ${q.inFlight} in flight${q.delayed ? ` · ${q.delayed} delayed` : ''}`, card);
    if (q.oldest) {
      const at = new Date(q.oldest.at).toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit' });
      el('div', 'sub age', `oldest ${formatAge(Math.round(q.oldest.seconds))} (at ${at})`, card);
    }
    // A worker's queue by its role (a user's object stage's queue is named by the stage, fed as rerun's normalize).
    const fedBy = !q.stage
      ? QUEUE_ROLES[`${q.worker ?? ''} ${q.name.endsWith(' DLQ') ? 'DLQ' : 'queue'}`]
      : q.name.endsWith(' DLQ')
        ? `window stage ${q.stage}, given up: see Dead letters`
        : `window stage ${q.stage}: window tasks (backfill, schedule, redrive)`;
    if (fedBy) el('div', 'sub', fedBy, card);
  }
}

function renderRuns(runs) {
  const target = $('runs');
  target.replaceChildren();
  if (runs.length === 0) {
    el('p', 'muted small', 'None running, and none ended in the last hour.', target);
    return;
  }
  for (const run of runs) {
    const row = el('div', `run ${run.state}`, undefined, target);
    row.dataset.command = run.command;
    row.dataset.state = run.state;
    const head = el('div', 'run-head', undefined, row);
    el('b', '', run.label, head);
    const stateText =
      run.state === 'ended'
        ? `ended, exit ${run.ended.code}`
        : run.state === 'gone'
          ? 'stopped (its process is gone)'
          : 'running';
    el(
      'span',
      `pill ${run.state === 'running' ? 'pending' : run.state === 'gone' || run.ended.code !== 0 ? 'failed' : 'published'}`,
      stateText,
      head,
    );
    const p = run.progress;
    // A run whose process is gone lasted until its last word, not until now.
    const until = run.ended ? run.ended.at : run.state === 'gone' ? run.updatedAt : Date.now();
    const seconds = (until - run.startedAt) / 1000;
    el('span', 'muted small', `pid ${run.pid} · ${formatAge(Math.round(seconds))}`, head);
    if (!p) continue;
    const line = el('div', 'run-line', undefined, row);
    // The phase a run was in when it wrote last: an ended run is no longer "waiting".
    const phase =
      run.state === 'running'
        ? p.phase
        : run.state === 'ended' && run.ended.code === 0
          ? 'done'
          : `stopped while ${p.phase}`;
    el('span', 'phase', phase, line);
    if (p.total !== undefined) {
      const bar = el('progress', '', undefined, line);
      bar.max = Math.max(1, p.total);
      bar.value = Math.min(p.done, p.total);
    }
    el('span', 'count', p.total !== undefined ? `${p.done}/${p.total} ${p.unit}` : `${p.done} ${p.unit}`, line);
    const figures = Object.entries(p.figures || {}).map(
      ([k, n]) => `${k.replace(/[A-Z]/g, (c) => ` ${c.toLowerCase()}`)} ${n}`,
    );
    if (figures.length > 0) el('span', 'muted small', figures.join(' · '), line);
  }
}

function renderOutcomes(outcomes) {
  const body = $('outcomes').tBodies[0];
  for (const o of outcomes) {
    const row = document.createElement('tr');
    const kind = o.status === 'processed' && o.quarantined ? 'quarantined' : o.status;
    row.dataset.status = kind;
    el('td', 'muted', new Date(o.at).toLocaleTimeString('en-GB'), row);
    el('span', `pill ${kind}`, kind, el('td', '', undefined, row));
    el('td', 'key', o.subject, row);
    el('td', 'why', o.quarantined ? `${o.reason} (${o.quarantined} quarantined)` : o.reason, row);
    body.insertBefore(row, body.firstChild);
  }
  while (body.rows.length > 200) body.deleteRow(-1);
}

function renderChart(feed) {
  const svg = $('chart');
  const ns = 'http://www.w3.org/2000/svg';
  svg.replaceChildren();
  const buckets = feed.throughput;
  const totals = buckets.map((b) => Object.values(b.counts).reduce((a, n) => a + n, 0));
  const max = Math.max(1, ...totals);
  const width = 1000 / buckets.length;
  // Axes: outcomes per interval (0, half the peak, the peak) and the time before now.
  for (const y of [10, 85, 160]) {
    const line = document.createElementNS(ns, 'line');
    line.setAttribute('x1', '0');
    line.setAttribute('x2', '1000');
    line.setAttribute('y1', String(y));
    line.setAttribute('y2', String(y));
    line.setAttribute('class', 'gridline');
    svg.appendChild(line);
  }
  const minutes = Math.round((buckets.length * feed.bucketMs) / 60000);
  $('chart-y').replaceChildren(...[max, Math.round(max / 2), 0].map((n) => el('span', '', String(n))));
  $('chart-x').replaceChildren(
    ...[`${minutes} min ago`, `${Math.round(minutes / 2)} min ago`, 'now'].map((t) => el('span', '', t)),
  );
  buckets.forEach((bucket, i) => {
    let y = 160;
    for (const kind of LIVE_KINDS) {
      const n = bucket.counts[kind] || 0;
      if (n === 0) continue;
      const h = (n / max) * 150;
      y -= h;
      const rect = document.createElementNS(ns, 'rect');
      rect.setAttribute('x', String(i * width + 1));
      rect.setAttribute('y', String(y));
      rect.setAttribute('width', String(Math.max(1, width - 2)));
      rect.setAttribute('height', String(h));
      rect.setAttribute('class', `bar ${kind}`);
      rect.style.fill = `var(--${kind === 'quarantined' ? 'quarantined' : kind})`;
      svg.appendChild(rect);
    }
  });
  const total = totals.reduce((a, n) => a + n, 0);
  $('throughput-note').textContent =
    `${total} outcomes in the last ${minutes} min · peak ${max} per ${feed.bucketMs / 1000} s`;
}

whenShown('dead-letters', loadDeadLetters);
whenShown('live', pollLive);
whenStopped(() => clearTimeout(liveTimer));
