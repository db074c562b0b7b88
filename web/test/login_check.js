// Signs in to the page of `inferscope up --listen` in headless Chromium (Debian's /usr/bin/chromium
// through playwright-core; no browser is downloaded) and checks the sign-in round trip:
//   node login_check.js --url https://127.0.0.1:PORT --user U --password P [--timeout S] [--screenshot FILE]
// 1. Opening the page without a session lands on /login (the server's 303).
// 2. Filling the form and pressing "Sign in" lands on the page, which draws its panels (at least
//    one panel leaves the loading state) with no page error (the CSP refuses inline script).
// 3. A cross-site form (a page of another origin, here a data: URL) that posts to the operator
//    route /api/drill gets a refusal (401 or 403), never the route's answer.
// 4. POST /logout from the page (same origin) lands on /login; opening the page afterwards lands
//    on /login again and /api/status answers 401.
// The server's certificate comes from a CA the test made: Chromium is launched with
// --ignore-certificate-errors for that reason, here only.
// Prints one JSON line {ok, steps, failing, errors}; exits 0 when every step held.
const { chromium } = require('playwright-core');

function loginCheckArgs() {
  const out = { timeout: 60 };
  const a = process.argv.slice(2);
  for (let i = 0; i < a.length; i += 2) out[a[i].replace(/^--/, '')] = a[i + 1];
  out.timeout = Number(out.timeout);
  return out;
}

(async () => {
  const opt = loginCheckArgs();
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--ignore-certificate-errors'],
  });
  const steps = {};
  const note = (what) => process.stderr.write(`login_check: ${what}\n`);
  const failing = [];
  const errors = [];
  try {
    // ignoreHTTPSErrors: for context.request (Playwright's own client), as the flag is for the browser.
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ignoreHTTPSErrors: true });
    const page = await context.newPage();
    page.on('pageerror', (e) => errors.push(String(e)));
    page.setDefaultTimeout(opt.timeout * 1000);

    await page.goto(`${opt.url}/`, { waitUntil: 'load' });
    steps.before_login = new URL(page.url()).pathname;
    note(`before login at ${steps.before_login}`);
    if (steps.before_login !== '/login') failing.push(`the page without a session is at ${page.url()}, not /login`);

    await page.fill('#user', opt.user);
    await page.fill('#password', opt.password);
    await Promise.all([page.waitForURL(`${opt.url}/`), page.click('button[type=submit]')]);
    steps.after_login = new URL(page.url()).pathname;
    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name === 'inferscope_session');
    steps.session_cookie = session ? { httpOnly: session.httpOnly, secure: session.secure, sameSite: session.sameSite } : null;
    if (!session || !session.httpOnly || !session.secure || session.sameSite !== 'Strict') {
      failing.push(`session cookie ${JSON.stringify(steps.session_cookie)} is not HttpOnly, Secure, SameSite=Strict`);
    }
    const deadline = Date.now() + opt.timeout * 1000;
    let drawn = [];
    while (Date.now() < deadline) {
      drawn = await page.$$eval('section.panel', (els) => els.filter((el) => el.dataset.state && el.dataset.state !== 'loading')
        .map((el) => `${el.dataset.panel}:${el.dataset.state}`));
      if (drawn.length > 0) break;
      await page.waitForTimeout(500);
    }
    steps.panels_drawn = drawn.length;
    note(`signed in, ${drawn.length} panels drawn`);
    if (drawn.length === 0) failing.push('the page drew no panel after sign-in');
    if (opt.screenshot) await page.screenshot({ path: opt.screenshot });

    // A page of another origin posts a form to the operator route while the user is signed in.
    const other = await context.newPage();
    const form = `<form method="post" action="${opt.url}/api/drill"><input name="x" value="1"></form>`;
    await other.goto(`data:text/html,${encodeURIComponent(form)}`);
    const [crossAnswer] = await Promise.all([
      other.waitForResponse((r) => r.url() === `${opt.url}/api/drill`),
      other.$eval('form', (f) => f.submit()),
    ]);
    steps.cross_site_post = crossAnswer.status();
    note(`cross-site post answered ${steps.cross_site_post}`);
    if (crossAnswer.status() !== 401 && crossAnswer.status() !== 403) failing.push(`a cross-site form POST got ${crossAnswer.status()}`);
    await other.close();

    // Sign out from the page (a same-origin POST, as a sign-out form would send).
    const out = await page.evaluate(async () => {
      const r = await fetch('/logout', { method: 'POST' });
      return { status: r.status, url: r.url, redirected: r.redirected };
    });
    steps.logout = out;
    note(`logout ${JSON.stringify(out)}`);
    if (!out.redirected || new URL(out.url).pathname !== '/login') failing.push(`POST /logout answered ${JSON.stringify(out)}`);
    await page.goto(`${opt.url}/`, { waitUntil: 'load' });
    steps.after_logout = new URL(page.url()).pathname;
    if (steps.after_logout !== '/login') failing.push(`after sign-out the page is at ${page.url()}, not /login`);
    // Through the context's request client (it shares the browser's cookies): a fetch() from the
    // page would meet the 401's Basic challenge, which makes Chromium wait on a password prompt.
    steps.status_after_logout = (await context.request.get(`${opt.url}/api/status`)).status();
    if (steps.status_after_logout !== 401) failing.push(`/api/status after sign-out answered ${steps.status_after_logout}`);
  } catch (e) {
    failing.push(String(e));
  } finally {
    await browser.close();
  }
  const ok = failing.length === 0 && errors.length === 0;
  console.log(JSON.stringify({ ok, steps, failing, errors }));
  process.exit(ok ? 0 : 1);
})().catch((e) => { console.log(JSON.stringify({ ok: false, errors: [String(e)] })); process.exit(1); });
