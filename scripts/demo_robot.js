// A stand-in for a team-chat robot, for scripts/demo.sh: listens on 127.0.0.1 (ephemeral port,
// written to the file given as the first argument) and prints every message it receives, as a
// Slack-compatible incoming webhook would show it. Answers {"ok":true}. Runs under node, which the
// build already needs (the dashboard's npm ci), so the demo needs nothing else.
const http = require('http');
const fs = require('fs');

const portFile = process.argv[2];
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    let text = body;
    try {
      const parsed = JSON.parse(body);
      text = typeof parsed.text === 'string' ? parsed.text : JSON.stringify(parsed, null, 2);
    } catch { /* not JSON: print as received */ }
    const indented = text.split('\n').map((l) => `    | ${l}`).join('\n');
    process.stdout.write(`\n[chat robot] message received (${req.method} ${req.url}):\n${indented}\n\n`);
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end('{"ok":true}');
  });
});
server.listen(0, '127.0.0.1', () => {
  fs.writeFileSync(portFile, String(server.address().port));
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
