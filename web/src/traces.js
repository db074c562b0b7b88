// The page's per-request traces, all from `inferscope up`'s own endpoints:
//   GET /api/traces?model=&since=&limit=   the slowest stored requests (the "Slow requests" table)
//   GET /api/traces/{trace_id}             one trace's spans (the waterfall)
//   GET /api/dashboard/exemplars?range=&target=&model=   trace_id exemplars of the e2e and TTFT
//                                          charts, drawn as points that open their waterfall
// main.js calls in through small hooks: renderTracesRow (layout), loadExemplars (with each data
// refresh, before the charts are drawn), chartExtras (per chart), refreshSlowRequests.
import { formatValue } from './format.js';

const kSlowRequestLimit = 20;
// The charts that carry exemplars (ids from the server's panel catalog).
const kExemplarPanels = ['e2e_latency', 'ttft'];
const kRangeUnits = { m: 60, h: 3600, d: 86400 };

const traces = {
  h: null,
  getJson: null,
  exemplars: new Map(), // panel id -> {status, reason, exemplars: [{trace_id, value, time}]}
  openTraceId: '',
};

// initTraces hands over main.js's element builder and JSON fetcher (one of each on the page).
export function initTraces({ h, getJson }) {
  traces.h = h;
  traces.getJson = getJson;
}

export function rangeSeconds(range) {
  const m = /^(\d+)([mhd])$/.exec(range);
  return m ? Number(m[1]) * kRangeUnits[m[2]] : 3600;
}

// renderTracesRow returns the "Traces" row: the slow-request table and the waterfall of one trace.
export function renderTracesRow() {
  const { h } = traces;
  const panel = (id, title, description) => h('section', { class: 'panel wide', id: `panel-${id}`, 'data-panel': id, 'data-kind': 'traces', 'data-state': 'loading' },
    h('header', {}, h('h3', {}, title)),
    h('p', { class: 'description' }, description),
    h('div', { class: 'notice' }, 'loading…'),
    h('div', { class: 'body' }));
  const waterfall = panel('waterfall', 'Trace waterfall', 'one request\'s spans on its own time axis: click a row above or an exemplar point on the e2e or TTFT chart');
  setNotice(waterfall, 'idle', 'no trace selected: click a slow request or an exemplar point');
  return h('section', { class: 'row', id: 'row-traces' }, h('h2', {}, 'Traces'),
    h('div', { class: 'panels' },
      panel('slow-requests', 'Slow requests', 'the slowest requests up\'s trace store kept in the range, slowest first'),
      waterfall));
}

function setNotice(el, st, message) {
  el.dataset.state = st;
  const notice = el.querySelector('.notice');
  notice.textContent = message || '';
  notice.className = `notice ${st}`;
  notice.hidden = !message;
}

// loadExemplars fetches the exemplar points for the page's selection; a failure is kept per chart
// and shown under it, never as an empty success.
export async function loadExemplars({ range, target, model }) {
  const q = new URLSearchParams({ range, target, model });
  try {
    const body = await traces.getJson(`/api/dashboard/exemplars?${q}`);
    for (const id of kExemplarPanels) traces.exemplars.set(id, body.panels[id] || { status: 'error', reason: 'missing from the answer' });
  } catch (err) {
    const reason = err.status === 404 ? 'this inferscope up serves no /api/dashboard/exemplars' : `cannot load exemplars: ${err.message}`;
    for (const id of kExemplarPanels) traces.exemplars.set(id, { status: 'error', reason });
  }
}

function exemplarsOf(panelId) {
  const e = traces.exemplars.get(panelId);
  return e && e.status === 'ok' ? e.exemplars : [];
}

// chartExtras gives buildChart what an exemplar chart adds: a draw hook placing the points and the
// largest exemplar value (so a request slower than the p99 line still fits on the axis).
// null for charts without exemplars.
export function chartExtras(panelId) {
  if (!kExemplarPanels.includes(panelId)) return null;
  return {
    yMax: () => exemplarsOf(panelId).reduce((m, e) => Math.max(m, e.value), 0),
    hooks: { draw: [(u) => placeExemplars(panelId, u)] },
  };
}

// placeExemplars draws each exemplar as a button over the chart, at its time and value; a point
// drawn before keeps its button (moved), so a refresh does not pull it from under the pointer.
function placeExemplars(panelId, u) {
  const { h } = traces;
  const old = new Map([...u.over.querySelectorAll('.exemplar')].map((b) => [b.dataset.traceId, b]));
  const width = u.over.clientWidth;
  const height = u.over.clientHeight;
  for (const e of exemplarsOf(panelId)) {
    const x = u.valToPos(e.time, 'x');
    const y = u.valToPos(e.value, 'left');
    if (!(x >= 0 && x <= width && y >= 0 && y <= height)) continue;
    const style = `left:${x.toFixed(1)}px;top:${y.toFixed(1)}px`;
    const kept = old.get(e.trace_id);
    if (kept) {
      kept.setAttribute('style', style);
      old.delete(e.trace_id);
      continue;
    }
    const label = `trace ${e.trace_id} · ${formatValue(e.value, 's')} at ${new Date(e.time * 1000).toLocaleTimeString()} · click for its waterfall`;
    u.over.append(h('button', {
      class: 'exemplar', type: 'button', title: label, 'aria-label': label,
      'data-trace-id': e.trace_id, 'data-value': String(e.value), style,
      onclick: (ev) => { ev.stopPropagation(); openTrace(e.trace_id); },
    }));
  }
  for (const gone of old.values()) gone.remove();
}

// noteExemplars says under each exemplar chart how many points it shows, or why none.
export function noteExemplars() {
  for (const id of kExemplarPanels) {
    const el = document.getElementById(`panel-${id}`);
    const e = traces.exemplars.get(id);
    if (!el || !e) continue;
    let note = el.querySelector('.exemplar-note');
    if (!note) {
      note = traces.h('p', { class: 'exemplar-note' });
      el.querySelector('.body').after(note);
    }
    const n = exemplarsOf(id).length;
    note.dataset.count = String(n);
    note.className = `exemplar-note ${e.status === 'ok' ? 'ok' : 'missing'}`;
    note.textContent = e.status === 'ok'
      ? `${n} exemplar${n === 1 ? '' : 's'} (points): click one for its trace's waterfall`
      : `no exemplars: ${e.reason}`;
  }
}

// dominantStage returns [stage, seconds] of the longest stage of a trace summary, or null.
function dominantStage(stages) {
  let best = null;
  for (const [name, s] of Object.entries(stages || {})) if (!best || s > best[1]) best = [name, s];
  return best;
}

// refreshSlowRequests reloads the table for the selected model and the charts' time range. The
// trace store names a job by its spans' service.name, not by up's scrape job, so only the model
// narrows the list (the job is a column).
export async function refreshSlowRequests({ range, model }) {
  const { h, getJson } = traces;
  const el = document.getElementById('panel-slow-requests');
  if (!el) return;
  const since = Math.floor(Date.now() / 1000 - rangeSeconds(range));
  const q = new URLSearchParams({ since: String(since), limit: String(kSlowRequestLimit) });
  if (model) q.set('model', model);
  let list;
  try {
    list = (await getJson(`/api/traces?${q}`)).traces || [];
    if (list.length === 0) {
      // Tell "nothing was ever received" from "nothing for this selection".
      const any = (await getJson('/api/traces?limit=1')).traces || [];
      el.querySelector('.body').replaceChildren();
      setNotice(el, 'no_data', any.length === 0
        ? `no traces received yet — point --otlp-endpoint at ${location.origin}/v1/traces`
        : `no traces${model ? ` of model ${model}` : ''} in the last ${range} (up's store holds older or other ones)`);
      el.dataset.count = '0';
      return;
    }
  } catch (err) {
    el.querySelector('.body').replaceChildren();
    setNotice(el, 'error', err.status === 404 ? 'this inferscope up serves no trace store (/api/traces)' : `cannot load traces: ${err.message}`);
    return;
  }
  setNotice(el, 'ok', '');
  el.dataset.count = String(list.length);
  const rows = list.map((t) => {
    const dominant = dominantStage(t.stages);
    return h('tr', { class: `trace-row${t.trace_id === traces.openTraceId ? ' open' : ''}`, 'data-trace-id': t.trace_id, tabindex: '0',
      onclick: () => openTrace(t.trace_id), onkeydown: (e) => { if (e.key === 'Enter') openTrace(t.trace_id); } },
    h('td', {}, new Date(t.start * 1000).toLocaleTimeString()),
    h('td', {}, t.job || '—'),
    h('td', {}, t.model || '—'),
    h('td', { class: 'duration' }, formatValue(t.duration_s, 's')),
    h('td', { class: t.status === 'error' ? 'worse' : '' }, t.status),
    h('td', { class: 'dominant' }, dominant
      ? `${dominant[0]} ${formatValue(dominant[1], 's')} (${t.duration_s > 0 ? Math.round((dominant[1] / t.duration_s) * 100) : 0} %)`
      : 'no stage spans'),
    h('td', { class: 'trace-id' }, t.trace_id.slice(0, 8)));
  });
  el.querySelector('.body').replaceChildren(h('table', { class: 'slow-requests' },
    h('thead', {}, h('tr', {}, ['time', 'job', 'model', 'duration', 'status', 'dominant stage', 'trace'].map((c) => h('th', {}, c)))),
    h('tbody', {}, rows)));
}

// spanTree orders spans depth-first (children by start time) with their depth; a span whose parent
// is not in the trace (a caller outside it) is a root.
function spanTree(spans) {
  const byId = new Map(spans.map((s) => [s.span_id, s]));
  const children = new Map();
  const roots = [];
  for (const s of spans) {
    if (s.parent_span_id && byId.has(s.parent_span_id)) {
      if (!children.has(s.parent_span_id)) children.set(s.parent_span_id, []);
      children.get(s.parent_span_id).push(s);
    } else {
      roots.push(s);
    }
  }
  const byStart = (a, b) => a.start_unix_ns - b.start_unix_ns;
  const out = [];
  const walk = (s, depth) => {
    out.push({ span: s, depth });
    for (const c of (children.get(s.span_id) || []).sort(byStart)) walk(c, depth + 1);
  };
  for (const r of roots.sort(byStart)) walk(r, 0);
  return out;
}

function tokensText(attrs) {
  const parts = [];
  if (attrs['gen_ai.usage.input_tokens'] != null) parts.push(`in ${attrs['gen_ai.usage.input_tokens']}`);
  if (attrs['gen_ai.usage.output_tokens'] != null) parts.push(`out ${attrs['gen_ai.usage.output_tokens']}`);
  return parts.join(' · ');
}

// isDerived: a span the gateway made from the server's own timings, not one it timed itself.
function isDerived(attrs) {
  return attrs['inferscope.derived'] === true || attrs['inferscope.derived'] === 'true';
}

// openTrace loads one trace and draws its waterfall: one row per span, indented by parent, its bar
// placed on the trace's time axis, with stage name, duration, tokens and status beside it.
export async function openTrace(traceId) {
  const { h, getJson } = traces;
  const el = document.getElementById('panel-waterfall');
  if (!el) return;
  traces.openTraceId = traceId;
  for (const row of document.querySelectorAll('tr.trace-row')) row.classList.toggle('open', row.dataset.traceId === traceId);
  el.dataset.traceId = traceId;
  setNotice(el, 'loading', `loading trace ${traceId}…`);
  el.scrollIntoView({ block: 'nearest' });
  let trace;
  try {
    trace = await getJson(`/api/traces/${encodeURIComponent(traceId)}`);
  } catch (err) {
    el.querySelector('.body').replaceChildren();
    setNotice(el, 'error', err.status === 404
      ? `trace ${traceId} is not in up's store (not exported to it, or already past the store's retention)`
      : `cannot load trace ${traceId}: ${err.message}`);
    return;
  }
  if (traces.openTraceId !== traceId) return; // another trace was clicked meanwhile
  const spans = trace.spans || [];
  if (spans.length === 0) {
    el.querySelector('.body').replaceChildren();
    setNotice(el, 'no_data', `trace ${traceId} has no spans`);
    return;
  }
  const t0 = Math.min(...spans.map((s) => s.start_unix_ns));
  const t1 = Math.max(...spans.map((s) => s.end_unix_ns));
  const total = Math.max(t1 - t0, 1);
  const seconds = (ns) => ns / 1e9;
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => h('span', { class: 'wf-tick', style: `left:${f * 100}%` }, formatValue(seconds(total * f), 's')));
  const rows = spanTree(spans).map(({ span, depth }) => {
    const attrs = span.attributes || {};
    const stage = attrs['inferscope.stage'] || '';
    const duration = span.end_unix_ns - span.start_unix_ns;
    const left = ((span.start_unix_ns - t0) / total) * 100;
    const width = (duration / total) * 100;
    const derived = isDerived(attrs);
    const truncated = attrs['inferscope.stage.truncated'] === true;
    return h('div', {
      class: `wf-row status-${span.status}${derived ? ' derived' : ''}`, 'data-span-id': span.span_id,
      'data-name': span.name, 'data-stage': stage, 'data-depth': String(depth), 'data-duration-s': String(seconds(duration)),
    },
    h('div', { class: 'wf-name', style: `padding-left:${depth * 16}px`, title: `${span.name} (${span.kind}, ${span.service || 'unknown service'})` },
      span.name, derived ? h('span', { class: 'badge derived' }, 'derived') : null,
      truncated ? h('span', { class: 'badge' }, 'cut short') : null),
    h('div', { class: 'wf-track' }, h('div', { class: 'wf-bar', style: `left:${left}%;width:${Math.max(width, 0.15)}%` })),
    h('div', { class: 'wf-duration' }, formatValue(seconds(duration), 's')),
    h('div', { class: 'wf-tokens' }, tokensText(attrs)),
    h('div', { class: `wf-status ${span.status === 'error' ? 'worse' : ''}` }, span.status));
  });
  const root = spans.find((s) => !s.parent_span_id) || spans[0];
  const rootAttrs = root.attributes || {};
  const model = rootAttrs['gen_ai.request.model'] || rootAttrs['gen_ai.response.model'] || '';
  setNotice(el, 'ok', '');
  el.querySelector('.body').replaceChildren(
    h('p', { class: 'wf-head' }, h('strong', {}, root.name), ` · trace ${traceId} · ${root.service || ''}${model ? ` · model ${model}` : ''}`,
      ` · ${formatValue(seconds(total), 's')} · started ${new Date(t0 / 1e6).toLocaleTimeString()}`),
    h('div', { class: 'waterfall' },
      h('div', { class: 'wf-row wf-axis' }, h('div', { class: 'wf-name' }, 'span'), h('div', { class: 'wf-track' }, ticks),
        h('div', { class: 'wf-duration' }, 'duration'), h('div', { class: 'wf-tokens' }, 'tokens'), h('div', { class: 'wf-status' }, 'status')),
      rows));
}
