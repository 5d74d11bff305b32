// The rerun console's Days view: the strip of days (or of a window stage's windows) with their
// verdicts, the inputs of the day picked, and the Output view each input opens (its output and its
// quarantine, read through /api/output).

import { $, addDays, DAY_MS, el, get, showView, state, stopped } from './consolePage.js';

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

export async function loadDays() {
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

export async function loadInputs() {
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

/** Moves the days window by its own length: -1 to the earlier days, 1 to the later. */
export function shiftWindow(direction) {
  const length = Math.round((Date.parse(state.to) - Date.parse(state.from)) / DAY_MS) + 1;
  state.from = addDays(state.from, direction * length);
  state.to = addDays(state.to, direction * length);
  history.replaceState(null, '', `#from=${state.from}&to=${state.to}`);
  loadDays();
}
