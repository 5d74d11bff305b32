// The rerun console: plain DOM over the read-only JSON API of app/ui/consoleServer.ts. Data is only
// ever written with textContent (object keys and failure reasons come from users' files).

const STATUS_LEGEND = ['published', 'stale', 'incomplete', 'missing', 'invalid'];
const LIVE_KINDS = ['processed', 'quarantined', 'skipped', 'failed', 'requeued'];
const DAY_MS = 86_400_000;
/** What fills each queue: a running backfill or reprocess shows here as its queue draining. */
const QUEUE_ROLES = {
  'normalize queue': 'uploads, reprocess, redrive',
  'summarize queue': 'summary tasks: backfill, daily schedule',
  'normalize DLQ': 'given up: see Dead letters',
  'summarize DLQ': 'given up: see Dead letters',
};

const state = {
  overview: undefined,
  from: '',
  to: '',
  day: undefined,
  after: undefined,
  liveSeq: 0,
  view: 'days',
  // The days view's window stage's grain when not daily (its tiles are then hours, weeks or months).
  grain: undefined,
};

/**
 * The token of the printed URL, read once from `?token=` and then taken out of the address bar (and
 * so out of the history). It lives in this tab's sessionStorage, which is per origin, port included,
 * so a reload keeps working; never in a cookie, which the browser would send to every port of the host.
 */
const TOKEN = takeToken();

function takeToken() {
  const url = new URL(location.href);
  const given = url.searchParams.get('token');
  if (given === null) return sessionStorage.getItem('rerun-token') ?? '';
  sessionStorage.setItem('rerun-token', given);
  url.searchParams.delete('token');
  history.replaceState(history.state, '', `${url.pathname}${url.search}${url.hash}`);
  return given;
}

/** GET an API path with the token in its header; throws with the server's message on an error status. */
async function get(path, params = {}) {
  const url = new URL(path, location.origin);
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') url.searchParams.set(k, String(v));
  const response = await fetch(url, { headers: { 'X-Rerun-Token': TOKEN }, credentials: 'omit' });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) {
    const error = new Error(body.error || `${response.status} ${response.statusText}`);
    // The rerun dev it reads has stopped (503): the page keeps what it shows and says so.
    if (body.stopped) error.stopped = body.stopped;
    throw error;
  }
  return body;
}

/* ---------- A rerun dev that stopped ---------- */

let recoverTimer;

/**
 * When the error says the rerun dev this page reads has stopped: shows why and how to start it
 * again above what the page last showed (nothing is cleared), and looks again every 2 s. True then.
 */
function stopped(error) {
  if (!error.stopped) return false;
  const banner = $('stopped');
  banner.dataset.app = error.stopped.appName;
  $('stopped-what').textContent = error.stopped.what;
  $('stopped-todo').textContent = error.stopped.todo;
  $('stopped-restart').textContent = error.stopped.restart;
  $('stopped-meanwhile').textContent = error.stopped.meanwhile;
  banner.classList.remove('hidden');
  clearTimeout(liveTimer);
  clearTimeout(recoverTimer);
  recoverTimer = setTimeout(recover, 2000);
  return true;
}

/** Reads the overview again; once it answers, the banner goes and the open view is read afresh. */
async function recover() {
  let overview;
  try {
    overview = await get('/api/overview');
  } catch (error) {
    if (!stopped(error)) recoverTimer = setTimeout(recover, 2000);
    return;
  }
  $('stopped').classList.add('hidden');
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

/** An element with a class and text, appended to a parent when given. */
function el(tag, className, text, parent) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = String(text);
  if (parent) parent.appendChild(node);
  return node;
}

function $(id) {
  return document.getElementById(id);
}

function addDays(day, n) {
  return new Date(Date.parse(`${day}T00:00:00Z`) + n * DAY_MS).toISOString().slice(0, 10);
}

function legend(target, names, label) {
  target.replaceChildren();
  for (const name of names) {
    const item = el('span', '', label ? label(name) : name, target);
    item.style.setProperty('--swatch', `var(--${name})`);
  }
}

function showView(view) {
  state.view = view;
  for (const tab of document.querySelectorAll('.tabs button')) {
    tab.setAttribute('aria-selected', String(tab.dataset.view === view));
  }
  for (const section of document.querySelectorAll('.view')) {
    section.classList.toggle('hidden', section.id !== `view-${view}`);
  }
  if (view === 'dead-letters') loadDeadLetters();
  if (view === 'live') pollLive();
}

/* ---------- Days ---------- */

function dayTile(p) {
  const c = p.coverage;
  const inputs = c ? c.inputs : p.inputs;
  // A day with no inputs has nothing to summarize: not a gap to repair, so it does not say "missing".
  const empty = inputs === 0 && p.status === 'missing';
  const tile = el('div', `day ${empty ? 'empty' : p.status}`);
  tile.dataset.day = p.day;
  tile.dataset.status = p.status;
  tile.title = `${p.day}: ${p.status} (${p.reason})`;
  if (state.grain) {
    // A window stage of another grain: its window's name (2026-12-05T13, 2026-W49, 2026-12).
    el('div', 'date', p.day, tile);
    el('div', 'weekday', state.grain, tile);
  } else {
    const date = new Date(`${p.day}T00:00:00Z`);
    el('div', 'date', date.toLocaleDateString('en', { month: 'short', day: 'numeric', timeZone: 'UTC' }), tile);
    el('div', 'weekday', date.toLocaleDateString('en', { weekday: 'short', timeZone: 'UTC' }), tile);
  }
  el('div', 'count', `${inputs} input${inputs === 1 ? '' : 's'}`, tile);
  el('div', 'status', empty ? 'no inputs' : p.status, tile);
  const dead = c ? c.deadLettered.count : 0;
  if (dead > 0) el('span', 'badge', `${dead} DLQ`, tile).title = `${dead} dead-lettered`;
  tile.addEventListener('click', () => openDay(p.day, p));
  return tile;
}

/**
 * What covers a day, in the page's words: rerun's daily summary on its reference pipeline, else the
 * user's window stage by its name (the overview's `stage`), or nothing when the pipeline has none.
 */
function dayCover() {
  const stage = state.overview?.stage;
  if (!stage) return 'daily summary';
  return stage.kind === 'window' ? `window of stage ${stage.name}` : 'window stage';
}

/**
 * How a user's object stage groups its inputs (the overview's `inputLayout`): by the days its own key
 * template reads (`days`), or as one group, all inputs (`all`, with a note saying why).
 */
function inputLayout() {
  return state.overview?.stage?.kind === 'inputs' ? state.overview.inputLayout : undefined;
}

function undatedTile(page) {
  const tile = el('div', 'day undated');
  tile.dataset.day = 'undated';
  tile.dataset.status = 'undated';
  // A window stage's: the objects directly under its input's root, outside any partition folder.
  const window = state.overview?.stage?.kind === 'window';
  const layout = inputLayout();
  const all = layout?.kind === 'all';
  tile.title = all
    ? `All the inputs: ${layout.note}.`
    : window
      ? `Objects directly under the input root, outside any partition folder: no ${dayCover()} covers them.`
      : layout
        ? `Inputs under the input prefix in no day of ${layout.template}: no ${dayCover()} covers them.`
        : `Inputs directly under the input prefix, outside any dt= day: no ${dayCover()} covers them.`;
  el('div', 'date', all ? 'All inputs' : window ? 'No window' : 'No day', tile);
  el(
    'div',
    'weekday',
    all ? 'not by day' : window ? 'outside partitions' : layout ? 'outside days' : 'outside dt=',
    tile,
  );
  const n = page.items.length;
  el('div', 'count', `${n}${page.next ? '+' : ''} input${n === 1 ? '' : 's'}`, tile);
  el('div', 'status', all ? 'all inputs' : 'undated', tile);
  const dead = page.items.filter((i) => i.class === 'dead-lettered').length;
  if (dead > 0) el('span', 'badge', `${dead} DLQ`, tile);
  tile.addEventListener('click', () => openDay('undated'));
  return tile;
}

async function loadDays() {
  $('window').textContent = `${state.from} → ${state.to}`;
  const strip = $('strip');
  try {
    const [report, undated] = await Promise.all([
      get('/api/days', { from: state.from, to: state.to }),
      get('/api/inputs', { day: 'undated', limit: 100 }),
    ]);
    state.grain = report.stage?.grain;
    strip.replaceChildren(...report.partitions.map(dayTile));
    // A user's object stage whose inputs are not keyed by day: the days API says why, shown as is.
    $('days-note').textContent = report.note ? `No days: ${report.note}.` : '';
    $('days-note').classList.toggle('hidden', !report.note);
    // A user's stage's keys in no day are found by reading its prefix a page at a time: a page may find none yet.
    if (undated.items.length > 0 || undated.next) strip.appendChild(undatedTile(undated));
    // The days with no inputs are counted apart: "missing" is for days with something to summarize.
    const noInputs = report.partitions.filter(
      (p) => p.status === 'missing' && (p.coverage ? p.coverage.inputs : p.inputs) === 0,
    ).length;
    const counts = Object.entries({ ...report.counts, missing: report.counts.missing - noInputs })
      .filter(([, n]) => n > 0)
      .map(([s, n]) => `${n} ${s}`);
    if (noInputs > 0) counts.push(`${noInputs} with no inputs`);
    $('days-cost').textContent =
      `${counts.join(', ') || 'no days'} · ${report.requests.list} list + ${report.requests.head} HEAD requests`;
    if (state.day) markSelected(state.day);
    // Nothing dated in the window, but inputs outside any day (npm start's samples): show those.
    const empty = noInputs === report.partitions.length;
    if (!state.day && empty && undated.items.length > 0) openDay('undated');
  } catch (error) {
    if (stopped(error)) return;
    strip.replaceChildren(el('div', 'error', `Could not read the days: ${error.message}`));
  }
}

function markSelected(day) {
  for (const tile of document.querySelectorAll('.day')) tile.classList.toggle('selected', tile.dataset.day === day);
}

async function openDay(day, verdict) {
  state.day = day;
  state.after = undefined;
  markSelected(day);
  $('day-detail').classList.remove('hidden');
  const byWindow = state.overview?.stage?.kind === 'window';
  const layout = inputLayout();
  const all = layout?.kind === 'all';
  $('day-title').textContent =
    day === 'undated' ? (all ? 'All inputs' : byWindow ? 'Outside any window' : 'Inputs outside any day') : day;
  const status = $('day-status');
  status.textContent = verdict ? verdict.status : all ? 'all inputs' : 'undated';
  status.className = `pill ${verdict ? verdict.status : ''}`;
  $('day-reason').textContent = verdict
    ? verdict.reason
    : all
      ? `Every input under the input prefix, as one group: ${layout.note}.`
      : byWindow
        ? `Directly under the input root, in no partition folder: no ${dayCover()} covers them.`
        : layout
          ? `Under the input prefix, in no day of ${layout.template}: the pipeline processes them, no ${dayCover()} covers them.`
          : `Directly under the input prefix, with no dt= partition: the pipeline processes them, no ${dayCover()} covers them.`;
  $('inputs').tBodies[0].replaceChildren();
  await loadInputs();
}

async function loadInputs() {
  const body = $('inputs').tBodies[0];
  const more = $('more-inputs');
  try {
    const page = await get('/api/inputs', { day: state.day, after: state.after, limit: 50 });
    body.querySelector('tr.placeholder')?.remove();
    const prefix = state.overview ? state.overview.inputPrefix : '';
    for (const item of page.items) {
      const row = el('tr', 'clickable', undefined, body);
      row.dataset.key = item.key;
      row.dataset.class = item.class;
      el('td', 'key', item.key.startsWith(prefix) ? item.key.slice(prefix.length) : item.key, row);
      el('span', `pill ${item.class}`, item.class, el('td', '', undefined, row));
      el('td', 'why', item.reason || item.skipReason || whyOf(item.class, item), row);
      // A window's input is an upstream stage's output: it has no output of its own to open.
      if (item.class !== 'input') row.addEventListener('click', () => openOutput(item.key));
      else row.className = '';
    }
    state.after = page.next;
    more.classList.toggle('hidden', !page.next);
    if (page.items.length === 0 && body.rows.length === 0) {
      const none = page.next ? 'None in the keys read so far: More reads on.' : 'No inputs.';
      el('td', 'muted', none, el('tr', 'placeholder', undefined, body)).colSpan = 3;
    }
  } catch (error) {
    if (stopped(error)) return;
    el('td', 'error', `Could not list the inputs: ${error.message}`, el('tr', '', undefined, body)).colSpan = 3;
  }
}

function whyOf(kind, item) {
  switch (kind) {
    case 'input':
      return `read by the window's build (an output of stage ${item.source})`;
    case 'covered':
      return 'output written after the input';
    case 'quarantined':
      return 'the whole file went to quarantine';
    case 'pending':
      return 'no output and no failure record yet: not processed, or being retried';
    case 'outdated':
      return 'the input changed after its output was written';
    default:
      return '';
  }
}

/* ---------- Output ---------- */

async function openOutput(key) {
  showView('output');
  const target = $('output');
  $('output-hint').classList.add('hidden');
  target.replaceChildren(el('p', 'muted', `Reading the output of ${key}…`));
  try {
    const result = await get('/api/output', { key });
    const head = el('div', 'panel');
    el('h2', '', key, head);
    el('p', 'muted small', `Output key: ${result.outputKey}`, head);
    target.replaceChildren(head);
    target.appendChild(
      previewPanel('Output', result.output, 'No output: the input is not processed, or produced none.'),
    );
    target.appendChild(previewPanel('Quarantine', result.quarantine, 'No quarantine object: no record was rejected.'));
  } catch (error) {
    if (stopped(error)) return target.replaceChildren(el('p', 'muted', `${key} was not read: see above.`));
    target.replaceChildren(el('p', 'error', error.message));
  }
}

function previewPanel(title, preview, empty) {
  const panel = el('div', 'panel');
  const headRow = el('div', 'panel-head', undefined, panel);
  el('h2', '', title, headRow);
  if (!preview) {
    el('p', 'muted', empty, panel);
    return panel;
  }
  el(
    'span',
    'muted small',
    `${preview.head.size} bytes · ${new Date(preview.head.lastModified).toISOString()}`,
    headRow,
  );
  const meta = el('dl', 'meta', undefined, panel);
  const rows = [['key', preview.head.key], ['etag', preview.head.etag], ...Object.entries(preview.head.metadata)];
  for (const [k, v] of rows) {
    el('dt', '', k, meta);
    el('dd', '', v, meta);
  }
  const lines = preview.lines.join('\n') + (preview.truncated ? '\n…' : '');
  el('pre', 'lines', lines || '(empty)', panel);
  return panel;
}

/* ---------- Dead letters ---------- */

async function loadDeadLetters() {
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

function formatAge(seconds) {
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  return `${Math.round(seconds / 3600)} h`;
}

/* ---------- Live ---------- */

let liveTimer;

async function pollLive() {
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

function shiftWindow(direction) {
  const length = Math.round((Date.parse(state.to) - Date.parse(state.from)) / DAY_MS) + 1;
  state.from = addDays(state.from, direction * length);
  state.to = addDays(state.to, direction * length);
  history.replaceState(null, '', `#from=${state.from}&to=${state.to}`);
  loadDays();
}

start();
