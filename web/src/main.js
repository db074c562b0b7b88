// inferscope dashboard page. Everything it shows comes from `inferscope up`'s own endpoints:
//   GET /api/dashboard/meta             rows, panels, targets, models, time ranges
//   GET /api/dashboard/data?range=&target=&model=   every panel's data or its "no data" reason
//   GET /api/doctor                     the doctor's current findings (when up serves it)
//   GET /api/traces, /api/dashboard/exemplars   slow requests, waterfalls, exemplar points (traces.js)
// The browser never talks to Prometheus and never sends PromQL: queries live on the server.
import 'uplot/dist/uPlot.min.css';
import './style.css';
import { buildChart } from './charts.js';
import { formatValue } from './format.js';
import { initTraces, renderTracesRow, loadExemplars, chartExtras, noteExemplars, refreshSlowRequests, openTrace } from './traces.js';

const state = {
  meta: null,
  range: '1h',
  target: '',
  model: '',
  refreshSeconds: 10,
  timer: null,
  charts: new Map(), // panel id -> {plot, signature}
  refreshes: 0,
  missing: '', // what every target panel misses (data.missing), shown once in the banner
};

function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') el.className = v;
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null) el.setAttribute(k, v);
  }
  for (const c of children.flat()) {
    if (c == null) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// csrfToken is the session's CSRF token from the readable `inferscope_csrf` cookie, which
// `up --listen` sets at sign-in (/login); '' when the page was not reached through a session.
function csrfToken() {
  const m = /(?:^|;\s*)inferscope_csrf=([^;]*)/.exec(document.cookie);
  return m ? decodeURIComponent(m[1]) : '';
}

// signOut ends the session (a same-origin POST /logout with the CSRF token) and opens the form.
async function signOut() {
  try {
    await fetch('/logout', { method: 'POST', headers: { 'X-CSRF-Token': csrfToken() }, redirect: 'manual' });
  } finally {
    location.assign('/login');
  }
}

// renderSignOut adds the sign-out control to the top bar when the page runs in a session.
function renderSignOut() {
  if (!csrfToken() || document.getElementById('sign-out')) return;
  document.querySelector('.top').append(h('button', { id: 'sign-out', class: 'sign-out', type: 'button', onclick: signOut }, 'Sign out'));
}

async function getJson(url) {
  const res = await fetch(url, { headers: { Accept: 'application/json' } });
  if (res.status === 401) {
    // The session ended under the open page (expired, signed out elsewhere, up restarted): up
    // answers a script's request without the Basic challenge, and the page goes to the form.
    location.assign('/login');
    const err = new Error('signed out: opening /login');
    err.status = 401;
    throw err;
  }
  const text = await res.text();
  let body = null;
  try { body = JSON.parse(text); } catch { /* keep null: reported below */ }
  if (!res.ok) {
    const msg = body && body.error && body.error.message ? body.error.message : `HTTP ${res.status}`;
    const err = new Error(msg);
    err.status = res.status;
    throw err;
  }
  if (body == null) throw new Error(`cannot parse JSON from ${url}`);
  return body;
}

function readUrlState() {
  const q = new URLSearchParams(location.search);
  state.range = q.get('range') || state.range;
  state.target = q.get('target') || '';
  state.model = q.get('model') || '';
  const r = Number(q.get('refresh'));
  if (Number.isFinite(r) && q.has('refresh')) state.refreshSeconds = r;
}

function writeUrlState() {
  const q = new URLSearchParams(location.search);
  q.set('range', state.range);
  if (state.target) q.set('target', state.target); else q.delete('target');
  if (state.model) q.set('model', state.model); else q.delete('model');
  q.set('refresh', String(state.refreshSeconds));
  history.replaceState(null, '', `?${q}`);
}

function select(id, label, options, value, onChange) {
  const el = h('select', { id, onchange: (e) => onChange(e.target.value) },
    options.map(([v, text]) => {
      const o = h('option', { value: v }, text);
      if (v === value) o.selected = true;
      return o;
    }));
  return h('label', { class: 'control' }, label, el);
}

function renderControls() {
  const m = state.meta;
  const bar = document.getElementById('controls');
  bar.replaceChildren(
    select('range', 'Range', m.ranges.map((r) => [r, r]), state.range, (v) => { state.range = v; changed(); }),
    select('target', 'Target', [['', m.default_target ? `auto (${m.default_target})` : 'auto'], ...m.targets.map((t) => [t.id, `${t.id} (${t.note || t.dialect}${t.up ? '' : ', down'})`])],
      state.target, (v) => { state.target = v; changed(); }),
    select('model', 'Model', [['', 'all models'], ...m.models.map((x) => [x, x])], state.model, (v) => { state.model = v; changed(); }),
    select('refresh', 'Auto-refresh', [['0', 'off'], ['5', '5 s'], ['10', '10 s'], ['30', '30 s'], ['60', '1 min']],
      String(state.refreshSeconds), (v) => { state.refreshSeconds = Number(v); changed(); }),
    h('button', { id: 'refresh-now', onclick: () => refresh() }, 'Refresh'),
    h('span', { id: 'status-line', class: 'status-line' }),
  );
}

function renderRows() {
  const main = document.getElementById('rows');
  main.replaceChildren();
  state.charts.clear();
  for (const row of state.meta.rows) {
    const grid = h('div', { class: `panels kind-${row.id}` });
    for (const p of row.panels) {
      const wide = p.kind === 'table' || p.kind === 'alerts' || p.kind === 'findings' || p.wide;
      grid.append(h('section', { class: `panel${wide ? ' wide' : ''}`, id: `panel-${p.id}`, 'data-panel': p.id, 'data-kind': p.kind, 'data-state': 'loading' },
        h('header', {}, h('h3', {}, p.title), p.unit ? h('span', { class: 'unit' }, unitText(p)) : null),
        p.description ? h('p', { class: 'description' }, p.description) : null,
        h('div', { class: 'notice' }, 'loading…'),
        h('div', { class: 'body' }),
        h('ul', { class: 'notes' })));
    }
    main.append(h('section', { class: 'row', id: `row-${row.id}`, 'data-row': row.id, 'data-state': 'shown' }, h('h2', {}, row.title),
      h('p', { class: 'row-reason notice no_data', hidden: '' }), grid));
  }
  main.append(renderTracesRow());
}

function unitText(p) {
  const names = { s: 'seconds', ratio: '% (0–100)', percent: '%', celsius: '°C', watts: 'W' };
  const left = names[p.unit] || p.unit;
  return p.right_unit ? `${left} · right axis ${names[p.right_unit] || p.right_unit}` : left;
}

function setPanelState(id, st, message) {
  const el = document.getElementById(`panel-${id}`);
  if (!el) return null;
  el.dataset.state = st;
  const notice = el.querySelector('.notice');
  notice.textContent = message || '';
  notice.className = `notice ${st}`;
  notice.hidden = !message;
  return el;
}

function chartWidth(el) {
  return Math.max(280, Math.floor(el.querySelector('.body').getBoundingClientRect().width));
}

function drawTimeseries(panel, result) {
  const el = setPanelState(panel.id, 'ok', '');
  const body = el.querySelector('.body');
  const ts = result.timeseries;
  const signature = `${panel.kind}|${ts.series.map((s) => s.label + s.axis).join(',')}`;
  const existing = state.charts.get(panel.id);
  if (existing && existing.signature === signature && body.contains(existing.plot.root)) {
    const values = panel.kind === 'stacked' ? null : ts.series.map((s) => s.values);
    if (values) {
      existing.plot.setData([ts.timestamps, ...values]);
      return;
    }
  }
  if (existing) existing.plot.destroy();
  body.replaceChildren();
  const plot = buildChart(body, panel, ts, chartWidth(el), chartExtras(panel.id));
  state.charts.set(panel.id, { plot, signature });
}

function dropChart(panel, el) {
  const existing = state.charts.get(panel.id);
  if (existing) { existing.plot.destroy(); state.charts.delete(panel.id); }
  el.querySelector('.body').replaceChildren();
}

function drawTable(panel, result) {
  const el = setPanelState(panel.id, 'ok', '');
  const t = result.table;
  const table = h('table', {},
    h('thead', {}, h('tr', {}, t.columns.map((c) => h('th', {}, c.label)))),
    h('tbody', {}, t.rows.map((r) => h('tr', {}, r.map((v, i) => {
      const c = t.columns[i];
      const cls = c.unit === 'change' && typeof v === 'number' ? (v > 0.2 ? 'worse' : v < -0.2 ? 'better' : '') : '';
      const text = typeof v === 'number' ? (c.unit === 'change' ? `${v >= 0 ? '+' : ''}${(v * 100).toFixed(0)} %` : formatValue(v, c.unit)) : (v ?? '—');
      return h('td', { class: cls }, text);
    })))));
  el.querySelector('.body').replaceChildren(table);
}

function drawAlerts(panel, result) {
  const alerts = result.alerts || [];
  const el = setPanelState(panel.id, 'ok', alerts.length ? '' : 'no alert is firing');
  el.dataset.count = String(alerts.length);
  const list = h('ul', { class: 'alerts' }, alerts.map((a) => h('li', { class: `sev-${a.severity || 'none'}` },
    h('strong', {}, a.alertname), ' ', h('span', { class: 'badge' }, a.severity || 'none'),
    a.since ? h('span', { class: 'since' }, ` since ${new Date(a.since * 1000).toLocaleTimeString()}`) : null,
    a.summary ? h('div', { class: 'summary' }, a.summary) : null,
    h('div', { class: 'labels' }, Object.entries(a.labels || {}).map(([k, v]) => `${k}=${v}`).join('  ')))));
  el.querySelector('.body').replaceChildren(list);
}

// showBanner says once, above every row, what the panels miss alike (no serving target scraped
// yet, Prometheus unreachable, up unreachable); the panels then point at it instead of repeating it.
function showBanner(text, kind) {
  const el = document.getElementById('banner');
  el.textContent = text || '';
  el.className = `banner ${kind || ''}`;
  el.hidden = !text;
}

// reasonText is a panel's reason with the banner's sentence replaced by a pointer to it.
function reasonText(prefix, reason) {
  const missing = state.missing;
  if (missing && reason === missing) return `${prefix} (see the banner above)`;
  if (missing && reason.startsWith(`${missing}; `)) return `${prefix} (see the banner above); ${reason.slice(missing.length + 2)}`;
  return `${prefix}: ${reason}`;
}

function applyPanel(panel, result) {
  const el = document.getElementById(`panel-${panel.id}`);
  if (!el || !result) return;
  if (result.status !== 'ok') {
    dropChart(panel, el);
    el.querySelector('.notes').replaceChildren();
    const prefix = result.status === 'unreachable' ? 'Prometheus unreachable' : result.status === 'error' ? 'query failed' : 'no data';
    setPanelState(panel.id, result.status, reasonText(prefix, result.reason));
    return;
  }
  if (panel.kind === 'table') drawTable(panel, result);
  else if (panel.kind === 'alerts') drawAlerts(panel, result);
  else drawTimeseries(panel, result);
  // Series of an otherwise drawn panel that had no data still say why (e.g. no gateway in front).
  const notes = el.querySelector('.notes');
  notes.replaceChildren(...(result.notes || []).map((n) => h('li', {}, reasonText('no data', n))));
}

// applyRows collapses each row whose series the target does not expose at all (data.rows: a
// feature that is off, a server that is no disaggregated fleet): the reason is said once under the
// row's title instead of once per panel. A row shown again resizes its charts to the grid.
function applyRows(rows) {
  for (const row of state.meta.rows) {
    const el = document.getElementById(`row-${row.id}`);
    if (!el) continue;
    const st = (rows || {})[row.id];
    const collapsed = Boolean(st && st.status === 'collapsed');
    const was = el.dataset.state;
    el.dataset.state = collapsed ? 'collapsed' : 'shown';
    const reason = el.querySelector('.row-reason');
    reason.textContent = collapsed ? `no data: ${st.reason}` : '';
    reason.hidden = !collapsed;
    el.querySelector('.panels').hidden = collapsed;
    if (was === 'collapsed' && !collapsed) {
      for (const p of row.panels) {
        const c = state.charts.get(p.id);
        const panelEl = document.getElementById(`panel-${p.id}`);
        if (c && panelEl) c.plot.setSize({ width: chartWidth(panelEl), height: 200 });
      }
    }
  }
}

function drawFindings(panel, doctor, error) {
  const el = document.getElementById(`panel-${panel.id}`);
  if (!el) return;
  if (error) {
    el.querySelector('.body').replaceChildren();
    setPanelState(panel.id, error.status === 404 ? 'no_data' : 'error',
      error.status === 404 ? 'no data: this inferscope up serves no doctor endpoint (/api/doctor)' : `doctor failed: ${error.message}`);
    return;
  }
  const findings = doctor.findings || [];
  const verdict = doctor.verdict || 'unknown';
  const st = verdict === 'no_data' ? 'no_data' : 'ok';
  setPanelState(panel.id, st, verdict === 'no_data' ? `no data: ${doctor.summary || doctor.reason || 'the doctor has too little data to judge'}` : '');
  el.dataset.verdict = verdict;
  el.dataset.count = String(findings.length);
  const items = findings.map((f) => h('li', { class: 'finding' },
    h('div', { class: 'finding-head' }, h('strong', {}, f.cause), f.stage ? ` · stage ${f.stage}` : '',
      f.score != null ? ` · score ${Number(f.score).toFixed(2)}` : '', f.share != null ? ` · explains ${(f.share * 100).toFixed(0)} %` : ''),
    f.summary ? h('div', { class: 'summary' }, f.summary) : null,
    (f.evidence || []).length ? h('table', { class: 'evidence' },
      h('thead', {}, h('tr', {}, h('th', {}, 'evidence'), h('th', {}, 'baseline'), h('th', {}, 'now'))),
      h('tbody', {}, f.evidence.map((e) => h('tr', {}, h('td', {}, e.metric || e.name || ''),
        h('td', {}, formatValue(e.baseline, e.unit)), h('td', {}, formatValue(e.incident ?? e.value, e.unit)))))) : null,
    (f.next_steps || []).length ? h('ul', { class: 'next-steps' }, f.next_steps.map((s) => h('li', {}, s))) : null));
  el.querySelector('.body').replaceChildren(
    h('p', { class: `verdict verdict-${verdict}` }, `verdict: ${verdict}`),
    findings.length ? h('ul', { class: 'findings' }, items) : null);
}

async function refresh() {
  if (!state.meta) return;
  if (state.meta.targets.length === 0) {
    // Prometheus had not scraped anything yet when the page loaded: ask again until it has.
    try {
      const meta = await getJson('/api/dashboard/meta');
      if (meta.targets.length) { state.meta = meta; renderControls(); }
    } catch { /* the data request below reports the failure */ }
  }
  const q = new URLSearchParams({ range: state.range, target: state.target, model: state.model });
  const line = document.getElementById('status-line');
  const panels = state.meta.rows.flatMap((r) => r.panels);
  let data = null;
  // Exemplars load beside the data, so each chart is drawn once with its points.
  const exemplars = loadExemplars({ range: state.range, target: state.target, model: state.model });
  try {
    data = await getJson(`/api/dashboard/data?${q}`);
    await exemplars;
  } catch (err) {
    showBanner(`cannot load data from inferscope up: ${err.message}`, 'unreachable');
    applyRows(null);
    for (const p of panels) if (p.kind !== 'findings') { dropChart(p, document.getElementById(`panel-${p.id}`)); setPanelState(p.id, 'error', 'no data (see the banner above)'); }
    line.textContent = `update failed: ${err.message}`;
    return;
  }
  const reachable = !data.prometheus || data.prometheus.reachable !== false;
  state.missing = data.missing || '';
  showBanner(state.missing ? `${reachable ? 'no data' : 'Prometheus unreachable'}: ${state.missing}` : '', reachable ? '' : 'unreachable');
  for (const p of panels) if (p.kind !== 'findings') applyPanel(p, data.panels[p.id]);
  applyRows(data.rows);
  noteExemplars();
  await refreshSlowRequests({ range: state.range, model: state.model });
  const findings = panels.find((p) => p.kind === 'findings');
  if (findings) {
    try {
      // The doctor's windows: 5 min vs the 30 min before by default; ?doctor_window=&doctor_baseline=
      // in the page's URL change them (a young stack has no 30 min of baseline yet).
      const page = new URLSearchParams(location.search);
      const dq = new URLSearchParams({ window: page.get('doctor_window') || '5m' });
      if (page.get('doctor_baseline')) dq.set('baseline', page.get('doctor_baseline'));
      if (state.model) dq.set('model', state.model);
      drawFindings(findings, await getJson(`/api/doctor?${dq}`), null);
    } catch (err) { drawFindings(findings, null, err); }
  }
  state.refreshes++;
  document.body.dataset.refreshes = String(state.refreshes);
  const prom = data.prometheus || {};
  line.textContent = `${prom.reachable ? '' : 'Prometheus unreachable · '}dialect ${data.dialect || '—'} · step ${data.step}s · updated ${new Date().toLocaleTimeString()}`;
  line.className = `status-line${prom.reachable ? '' : ' unreachable'}`;
}

function schedule() {
  clearInterval(state.timer);
  state.timer = null;
  if (state.refreshSeconds > 0) state.timer = setInterval(refresh, state.refreshSeconds * 1000);
}

function changed() {
  writeUrlState();
  schedule();
  refresh();
}

async function start() {
  initTraces({ h, getJson });
  renderSignOut();
  readUrlState();
  try {
    state.meta = await getJson('/api/dashboard/meta');
  } catch (err) {
    document.getElementById('rows').replaceChildren(h('p', { class: 'notice error' }, `cannot load the dashboard's layout: ${err.message}`));
    return;
  }
  if (!state.meta.ranges.includes(state.range)) state.range = state.meta.default_range;
  renderControls();
  renderRows();
  writeUrlState();
  await refresh();
  schedule();
  // The doctor's example traces link here as ?trace=<id> (chat robots, its Markdown): open that
  // trace's waterfall.
  const linked = new URLSearchParams(location.search).get('trace');
  if (linked && /^[0-9a-f]{32}$/.test(linked)) openTrace(linked);
  let resizeTimer = null;
  window.addEventListener('resize', () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => {
      for (const [id, c] of state.charts) {
        const el = document.getElementById(`panel-${id}`);
        if (el) c.plot.setSize({ width: chartWidth(el), height: 200 });
      }
    }, 150);
  });
}

start();
