// The rerun console's shared ground: the page's state, its calls to the read-only JSON API of
// app/ui/consoleServer.ts, the DOM and format helpers every view uses, switching views, and the
// banner of a rerun dev that stopped. Data is only ever written with textContent (object keys and
// failure reasons come from users' files).

export const DAY_MS = 86_400_000;

/** What every view reads: the overview, the days window, the open day and the live feed's place. */
export const state = {
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
export async function get(path, params = {}) {
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

/* ---------- Views ---------- */

/** What to read when a view is shown, by its name (the views that read afresh each time register here). */
const onShow = new Map();

/** Registers what to read each time a view is shown. */
export function whenShown(view, load) {
  onShow.set(view, load);
}

/** Shows one view (days, dead-letters, live, output), marks its tab, and reads it when it reads afresh. */
export function showView(view) {
  state.view = view;
  for (const tab of document.querySelectorAll('.tabs button')) {
    tab.setAttribute('aria-selected', String(tab.dataset.view === view));
  }
  for (const section of document.querySelectorAll('.view')) {
    section.classList.toggle('hidden', section.id !== `view-${view}`);
  }
  onShow.get(view)?.();
}

/* ---------- A rerun dev that stopped ---------- */

let recoverTimer;

/** What pauses when the rerun dev stops (a view's polling timer), and what reads afresh once it answers. */
const onStop = [];
let onAnswer;

/** Registers what to pause when the rerun dev this page reads stops. */
export function whenStopped(pause) {
  onStop.push(pause);
}

/** Sets what to do with the overview once a stopped rerun dev answers again. */
export function whenAnswering(answered) {
  onAnswer = answered;
}

/**
 * When the error says the rerun dev this page reads has stopped: shows why and how to start it
 * again above what the page last showed (nothing is cleared), and looks again every 2 s. True then.
 */
export function stopped(error) {
  if (!error.stopped) return false;
  const banner = $('stopped');
  banner.dataset.app = error.stopped.appName;
  $('stopped-what').textContent = error.stopped.what;
  $('stopped-todo').textContent = error.stopped.todo;
  $('stopped-restart').textContent = error.stopped.restart;
  $('stopped-meanwhile').textContent = error.stopped.meanwhile;
  banner.classList.remove('hidden');
  for (const pause of onStop) pause();
  clearTimeout(recoverTimer);
  recoverTimer = setTimeout(recover, 2000);
  return true;
}

/** Reads the overview again; once it answers, the banner goes and the page reads afresh. */
async function recover() {
  let overview;
  try {
    overview = await get('/api/overview');
  } catch (error) {
    if (!stopped(error)) recoverTimer = setTimeout(recover, 2000);
    return;
  }
  $('stopped').classList.add('hidden');
  onAnswer?.(overview);
}

/* ---------- DOM and format helpers ---------- */

/** An element with a class and text, appended to a parent when given. */
export function el(tag, className, text, parent) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = String(text);
  if (parent) parent.appendChild(node);
  return node;
}

/** The element of an id. */
export function $(id) {
  return document.getElementById(id);
}

/** The day n days after a YYYY-MM-DD day (before it when n is negative). */
export function addDays(day, n) {
  return new Date(Date.parse(`${day}T00:00:00Z`) + n * DAY_MS).toISOString().slice(0, 10);
}

/** Fills a legend with a swatch per name, coloured by the CSS variable of the name. */
export function legend(target, names, label) {
  target.replaceChildren();
  for (const name of names) {
    const item = el('span', '', label ? label(name) : name, target);
    item.style.setProperty('--swatch', `var(--${name})`);
  }
}

/** A duration in seconds, minutes or hours, whichever reads best. */
export function formatAge(seconds) {
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  return `${Math.round(seconds / 3600)} h`;
}
