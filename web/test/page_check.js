// Drives the dashboard page in headless Chromium (Debian's /usr/bin/chromium through
// playwright-core; no browser is downloaded) and waits until the page shows what is expected:
//   node page_check.js --url URL --expect data|fault|nodata --screenshot FILE [--timeout S]
//                      [--query 'doctor_window=20s&doctor_baseline=40s'] [--scheme light|dark] [--rows a,b]
//   data:   every chart and table panel has drawn data (state ok, with a canvas or rows), except the
//           panels of a row the page collapsed (the target exposes none of its series: it says why
//           once); with --rows a,b only the panels of those rows, which must not be collapsed
//   fault:  the alerts panel lists a firing alert (not the watchdog) and the doctor panel shows a
//           finding (unless --doctor optional: this up serves no /api/doctor)
//   nodata: every Prometheus-backed panel says why it has no data (unreachable / no_data)
//   banner: the banner above the rows names what is missing (it contains --banner TEXT), and each
//           panel without data says "no data" once, pointing at the banner instead of repeating it
//   waterfall (--via table|exemplar|link --stage S [--min-share F]): clicks the slowest row of the
//           "Slow requests" table, or the highest exemplar point of the e2e chart, or (link) expects
//           the page opened at --query trace=<id> (the doctor's example links) to open it, and checks that
//           the waterfall it opens has the bar of stage S as the widest of the root's children and
//           at least F (default 0.5) of the root's width; the screenshot is of the Traces row
// --axes 1280,1600 (with --expect data): once the data expectation held, resizes the page to each
// width and checks every chart's canvas: no axis title (text drawn rotated) overlaps a tick label
// or another text, and each title lies inside its canvas. The boxes are the rendered ones: an init
// script records every fillText of the page's canvases with its measured ink box (measureText
// under the context's font, alignment, baseline and transform), so the check does not repeat
// uPlot's layout arithmetic; a screenshot per width is kept beside --screenshot (NAME-1600.png).
// It also checks each chart's time axis: where the range holds less data than it spans (the first
// sample is later than the range's first timestamp) the axis starts at the first sample (one step
// before it when that sample is the range's last point), else at the range's start (the chart's
// data-x-min against data-first-sample, data-range-start, data-range-end, data-step).
// Prints one JSON line with each panel's state and message; exits 0 when the expectation held
// within the timeout, 1 otherwise (the screenshot is taken either way).
const { chromium } = require('playwright-core');

// recordCanvasText runs in the page before its own script: each canvas keeps the texts drawn on it
// since its last full clear (uPlot clears the whole canvas before each redraw), with their boxes
// in canvas pixels.
function recordCanvasText() {
  const texts = new WeakMap();
  window.__inferscopeCanvasTexts = (canvas) => texts.get(canvas) || [];
  const proto = CanvasRenderingContext2D.prototype;
  const clearRect = proto.clearRect;
  const fillText = proto.fillText;
  proto.clearRect = function (x, y, w, h) {
    if (x <= 0 && y <= 0 && w >= this.canvas.width && h >= this.canvas.height) texts.set(this.canvas, []);
    return clearRect.apply(this, arguments);
  };
  proto.fillText = function (text, x, y) {
    const m = this.measureText(String(text));
    const t = this.getTransform();
    const xs = [x - m.actualBoundingBoxLeft, x + m.actualBoundingBoxRight];
    const ys = [y - m.actualBoundingBoxAscent, y + m.actualBoundingBoxDescent];
    const px = [];
    const py = [];
    for (const a of xs) for (const b of ys) { px.push(t.a * a + t.c * b + t.e); py.push(t.b * a + t.d * b + t.f); }
    if (!texts.has(this.canvas)) texts.set(this.canvas, []);
    texts.get(this.canvas).push({
      text: String(text), rotated: Math.abs(t.b) > 1e-6,
      left: Math.min(...px), right: Math.max(...px), top: Math.min(...py), bottom: Math.max(...py),
    });
    return fillText.apply(this, arguments);
  };
}

// canvasTexts reads, per drawn chart, the texts on its canvas in page CSS pixels.
async function canvasTexts(page) {
  return page.$$eval('section.panel canvas', (canvases) => canvases.map((c) => {
    const r = c.getBoundingClientRect();
    if (r.width === 0 || r.height === 0 || !window.__inferscopeCanvasTexts) return null;
    const sx = r.width / c.width;
    const sy = r.height / c.height;
    return {
      panel: c.closest('section.panel').dataset.panel,
      box: { left: r.left, right: r.right, top: r.top, bottom: r.bottom },
      texts: window.__inferscopeCanvasTexts(c).map((t) => ({
        text: t.text, rotated: t.rotated,
        left: r.left + t.left * sx, right: r.left + t.right * sx, top: r.top + t.top * sy, bottom: r.top + t.bottom * sy,
      })),
    };
  }).filter(Boolean));
}

// judgeTimeAxes: each drawn chart's time axis starts at its first sample.
async function judgeTimeAxes(page) {
  const charts = await page.$$eval('section.panel[data-x-min]', (els) => els
    .filter((el) => el.querySelector('canvas') && el.getBoundingClientRect().width > 0)
    .map((el) => ({ panel: el.dataset.panel, xMin: Number(el.dataset.xMin), first: el.dataset.firstSample === '' ? null : Number(el.dataset.firstSample),
      start: Number(el.dataset.rangeStart), end: Number(el.dataset.rangeEnd), step: Number(el.dataset.step) })));
  const failing = [];
  let shorter = 0;
  for (const c of charts) {
    if (c.first == null) continue;
    const want = c.first <= c.start ? c.start : c.first < c.end ? c.first : c.end - c.step;
    if (c.first > c.start) shorter++;
    if (!(Math.abs(c.xMin - want) < 1e-6)) failing.push(`chart ${c.panel}: time axis starts at ${c.xMin}, its first sample is at ${c.first} (range from ${c.start})`);
  }
  if (charts.length === 0) failing.push('no chart records its time axis (data-x-min)');
  return { failing, summary: { charts: charts.length, shorter } };
}

// judgeAxes: no title box intersects another text's box, and each title is inside its canvas.
function judgeAxes(charts, width) {
  const failing = [];
  let titles = 0;
  let ticks = 0;
  const px = (t) => `"${t.text}" [${t.left.toFixed(1)}..${t.right.toFixed(1)} x ${t.top.toFixed(1)}..${t.bottom.toFixed(1)}]`;
  for (const chart of charts) {
    const rotated = chart.texts.filter((t) => t.rotated);
    titles += rotated.length;
    ticks += chart.texts.length - rotated.length;
    for (const title of rotated) {
      const b = chart.box;
      if (title.left < b.left - 0.5 || title.right > b.right + 0.5 || title.top < b.top - 0.5 || title.bottom > b.bottom + 0.5) {
        failing.push(`${width} px, chart ${chart.panel}: axis title ${px(title)} is cut by its canvas`);
      }
      for (const other of chart.texts) {
        if (other === title) continue;
        const overlap = Math.min(title.right, other.right) - Math.max(title.left, other.left) > 0 &&
                        Math.min(title.bottom, other.bottom) - Math.max(title.top, other.top) > 0;
        if (overlap) failing.push(`${width} px, chart ${chart.panel}: axis title ${px(title)} overlaps ${px(other)}`);
      }
    }
  }
  if (charts.length === 0 || titles === 0 || ticks === 0) failing.push(`${width} px: no chart text recorded (${charts.length} charts, ${titles} titles, ${ticks} other texts)`);
  return { failing, summary: { width, charts: charts.length, titles, ticks } };
}

function args() {
  const out = { timeout: 60, expect: 'data', width: 1280 };
  const a = process.argv.slice(2);
  for (let i = 0; i < a.length; i += 2) out[a[i].replace(/^--/, '')] = a[i + 1];
  out.timeout = Number(out.timeout);
  out.width = Number(out.width);
  return out;
}

async function panelStates(page) {
  return page.$$eval('section.panel', (els) => els.map((el) => ({
    id: el.dataset.panel,
    row: el.closest('section.row') ? el.closest('section.row').dataset.row : '',
    kind: el.dataset.kind,
    state: el.dataset.state,
    count: el.dataset.count === undefined ? null : Number(el.dataset.count),
    canvas: el.querySelectorAll('canvas').length,
    rows: el.querySelectorAll('tbody tr').length,
    message: el.querySelector('.notice') ? el.querySelector('.notice').textContent : '',
    notes: [...el.querySelectorAll('ul.notes li')].map((li) => li.textContent),
    alerts: [...el.querySelectorAll('ul.alerts li strong')].map((s) => s.textContent),
  })));
}

// rowStates reads each row: shown or collapsed, and the reason a collapsed row gives once.
async function rowStates(page) {
  return page.$$eval('section.row[data-row]', (els) => els.map((el) => ({
    id: el.dataset.row,
    state: el.dataset.state,
    reason: el.querySelector('.row-reason') ? el.querySelector('.row-reason').textContent : '',
  })));
}

function judge(expect, panels, doctorOptional, banner, bannerWanted, rows, onlyRows) {
  const failing = [];
  if (expect === 'banner' && !(banner.visible && banner.text.includes(bannerWanted))) failing.push('banner');
  const collapsed = new Set(rows.filter((r) => r.state === 'collapsed').map((r) => r.id));
  if (expect === 'data') {
    for (const id of onlyRows) {
      if (!rows.some((r) => r.id === id)) failing.push(`row ${id} (not on the page)`);
      else if (collapsed.has(id)) failing.push(`row ${id} (collapsed)`);
    }
    for (const r of rows) if (collapsed.has(r.id) && !(r.reason.length > 20)) failing.push(`row ${r.id} (collapsed without a reason)`);
  }
  for (const p of panels) {
    if (p.kind === 'traces') { // not Prometheus-backed: drawn after the charts, judged by the caller
      if (p.state === 'loading') failing.push(p.id);
      continue;
    }
    if (expect === 'data') {
      if (p.kind === 'findings' || p.kind === 'alerts') continue;
      if (onlyRows.length ? !onlyRows.includes(p.row) : collapsed.has(p.row)) continue;
      const drawn = p.state === 'ok' && (p.kind === 'table' ? p.rows > 0 : p.canvas > 0);
      if (!drawn) failing.push(p.id);
    } else if (expect === 'fault') {
      // The watchdog always fires; a fault must bring a real alert.
      if (p.kind === 'alerts' && !(p.state === 'ok' && p.alerts.some((a) => a !== 'InferscopeWatchdog'))) failing.push(p.id);
      if (p.kind === 'findings' && !(p.state === 'ok' && p.count > 0) && !doctorOptional) failing.push(p.id);
    } else if (expect === 'nodata') {
      if (p.kind === 'findings') continue;
      const explained = (p.state === 'unreachable' || p.state === 'no_data' || p.state === 'error') && p.message.length > 20;
      if (!explained || p.canvas > 0) failing.push(p.id);
    } else if (expect === 'banner') {
      if (p.kind === 'findings' || p.state === 'ok') continue;
      const text = [p.message, ...p.notes].join('\n');
      const saidOnce = p.state === 'no_data' && (text.match(/no data/g) || []).length === 1;
      if (!saidOnce || text.includes(bannerWanted)) failing.push(p.id);
    }
  }
  return failing;
}

// waterfallRows reads the drawn waterfall: one entry per span row with its bar's rendered size.
async function waterfallRows(page) {
  return page.$$eval('#panel-waterfall .wf-row[data-span-id]', (rows) => rows.map((r) => {
    const bar = r.querySelector('.wf-bar').getBoundingClientRect();
    return {
      name: r.dataset.name, stage: r.dataset.stage, depth: Number(r.dataset.depth),
      duration_s: Number(r.dataset.durationS), bar_left: bar.left, bar_width: bar.width,
      label: r.querySelector('.wf-duration').textContent, derived: r.classList.contains('derived'),
    };
  }));
}

function judgeWaterfall(rows, stage, minShare) {
  const root = rows.find((r) => r.depth === 0);
  const stages = rows.filter((r) => r.depth === 1 && r.stage);
  if (!root || stages.length === 0) return ['the waterfall has no root or no stage bars'];
  const widest = stages.reduce((a, b) => (b.bar_width > a.bar_width ? b : a));
  const failing = [];
  if (widest.stage !== stage) failing.push(`widest stage bar is ${widest.stage}, not ${stage}`);
  if (!(widest.bar_width >= minShare * root.bar_width)) failing.push(`${widest.stage} bar is ${widest.bar_width} px of the root's ${root.bar_width} px`);
  if (stages.some((r) => r !== widest && r.duration_s >= widest.duration_s)) failing.push('the widest bar is not the longest stage');
  return failing;
}

// openWaterfall clicks what --via names and waits for the waterfall to draw; {clicked, state, message}.
async function openWaterfall(page, via, deadline) {
  while (Date.now() < deadline) {
    await page.waitForTimeout(1000);
    let clicked = null;
    if (via === 'table') {
      const row = await page.$('#panel-slow-requests tr.trace-row');
      if (row) { clicked = await row.getAttribute('data-trace-id'); await row.click(); }
    } else if (via === 'link') {
      // The page was opened at ?trace=<id> (--query): nothing to click, it opens that trace itself.
      clicked = new URL(page.url()).searchParams.get('trace');
    } else {
      const points = await page.$$eval('#panel-e2e_latency button.exemplar',
        (els) => els.map((e) => ({ id: e.dataset.traceId, value: Number(e.dataset.value) })));
      if (points.length) {
        clicked = points.reduce((a, b) => (b.value > a.value ? b : a)).id;
        // Points close in time and value overlap (and the sticky control bar may cover the chart):
        // the click goes to the chosen point itself, as a user's would to the point on top.
        await page.locator(`#panel-e2e_latency button.exemplar[data-trace-id="${clicked}"]`).dispatchEvent('click');
      }
    }
    if (!clicked) continue;
    // Polled with $eval, not waitForFunction: Playwright compiles a waitForFunction predicate with
    // new Function() in the page, which the page's CSP (no 'unsafe-eval') refuses as a page error.
    const drawnBy = Math.min(deadline, Date.now() + 10000);
    let drawn = false;
    while (!drawn && Date.now() < drawnBy) {
      drawn = await page.$eval('#panel-waterfall', (el, id) => el.dataset.traceId === id && el.dataset.state !== 'loading', clicked);
      if (!drawn) await page.waitForTimeout(100);
    }
    if (!drawn) continue; // still loading after 10 s: click again
    const state = await page.$eval('#panel-waterfall', (el) => ({ state: el.dataset.state, message: el.querySelector('.notice').textContent }));
    // A point can be scraped before its trace reached the store: click again on the next refresh.
    if (state.state === 'ok') return { clicked, ...state };
  }
  return null;
}

(async () => {
  const opt = args();
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  let ok = false;
  let panels = [];
  let banner = { visible: false, text: '' };
  let rows = [];
  const axes = [];
  let timeAxes = null;
  const onlyRows = opt.rows ? opt.rows.split(',').filter(Boolean) : [];
  let failing = ['page did not load'];
  const errors = [];
  try {
    const page = await browser.newPage({ viewport: { width: opt.width, height: 900 }, colorScheme: opt.scheme || 'light' });
    page.on('pageerror', (e) => errors.push(String(e)));
    if (opt.axes) await page.addInitScript(recordCanvasText);
    page.on('requestfailed', (r) => { if (!r.url().startsWith(opt.url)) errors.push(`outside request: ${r.url()}`); });
    page.on('request', (r) => { if (!r.url().startsWith(opt.url)) errors.push(`outside request: ${r.url()}`); });
    await page.goto(`${opt.url}/?range=15m&refresh=2${opt.query ? `&${opt.query}` : ''}`, { waitUntil: 'load' });
    const deadline = Date.now() + opt.timeout * 1000;
    if (opt.expect === 'waterfall') {
      const opened = await openWaterfall(page, opt.via || 'table', deadline);
      const rows = opened ? await waterfallRows(page) : [];
      failing = opened ? judgeWaterfall(rows, opt.stage || 'decode', Number(opt['min-share'] || 0.5)) : [`no ${opt.via} entry opened a waterfall`];
      ok = failing.length === 0;
      panels = [{ id: 'waterfall', via: opt.via, trace_id: opened && opened.clicked, rows }];
      // The sticky control bar would cover the row's top in an element screenshot.
      await page.$eval('.top', (el) => { el.style.position = 'static'; });
      if (opt.screenshot) await page.locator('#row-traces').screenshot({ path: opt.screenshot });
      opt.screenshot = '';
    }
    while (opt.expect !== 'waterfall' && Date.now() < deadline) {
      await page.waitForTimeout(1000);
      panels = await panelStates(page);
      banner = await page.$eval('#banner', (el) => ({ visible: !el.hidden, text: el.textContent }));
      rows = await rowStates(page);
      failing = judge(opt.expect, panels, opt.doctor === 'optional', banner, opt.banner || '', rows, onlyRows);
      if (panels.length > 0 && failing.length === 0) { ok = true; break; }
    }
    if (opt.screenshot) await page.screenshot({ path: opt.screenshot, fullPage: true });
    if (ok && opt.axes) {
      for (const width of opt.axes.split(',').map(Number)) {
        await page.setViewportSize({ width, height: 900 });
        await page.waitForTimeout(1500); // the page resizes its charts 150 ms after the last resize event
        const judged = judgeAxes(await canvasTexts(page), width);
        axes.push(judged.summary);
        failing.push(...judged.failing);
        if (opt.screenshot) await page.screenshot({ path: opt.screenshot.replace(/(\.png)?$/, `-${width}.png`), fullPage: true });
      }
      const time = await judgeTimeAxes(page);
      timeAxes = time.summary;
      failing.push(...time.failing);
      ok = failing.length === 0;
    }
  } finally {
    await browser.close();
  }
  if (errors.length) ok = false;
  console.log(JSON.stringify({ ok, expect: opt.expect, failing, errors, axes, time_axes: timeAxes, banner, rows, panels }));
  process.exit(ok ? 0 : 1);
})().catch((e) => { console.log(JSON.stringify({ ok: false, errors: [String(e)] })); process.exit(1); });
