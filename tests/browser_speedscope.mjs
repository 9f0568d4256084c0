// SPDX-License-Identifier: MIT
// The Chrome JSON export seen in a real browser: speedscope (npm package) in headless
// Chromium driven by puppeteer-core. A server on 127.0.0.1 serves speedscope's built page and
// the trace; the page loads it through its URL hash (#profileURL=). Asserted on the page:
//   - the threads: speedscope makes one profile per thread that has slices, titled with the
//     process and thread names; every such thread of the JSON is listed (n/N in the toolbar,
//     'n' steps to the next), and there are at least two;
//   - the slices: every slice name of each thread is found by the sandwich view's search
//     (speedscope names a frame "NAME {args...}").
// Screenshots of the time-order and sandwich views are kept in OUTDIR.
// usage: node browser_speedscope.mjs NODE_MODULES_DIR CHROMIUM TRACE.json OUTDIR
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import {createRequire} from 'node:module';

const [modules, chromium, tracePath, outDir] = process.argv.slice(2);
const require = createRequire(path.join(modules, 'noop.js'));
const puppeteer = require('puppeteer-core');
const release = path.join(modules, 'speedscope', 'dist', 'release');

// What the page must show, from the JSON itself (the exporter's names, whatever they are).
const events = JSON.parse(fs.readFileSync(tracePath, 'utf8')).traceEvents;
const processNames = new Map(), threadNames = new Map(), slices = new Map();
for (const e of events) {
  const key = `${e.pid}:${e.tid}`;
  if (e.ph === 'M' && e.name === 'process_name') processNames.set(e.pid, e.args.name);
  else if (e.ph === 'M' && e.name === 'thread_name') threadNames.set(key, e.args.name);
  else if (e.ph === 'X' || e.ph === 'B') {
    if (!slices.has(key)) slices.set(key, {pid: e.pid, tid: e.tid, names: new Set()});
    slices.get(key).names.add(e.name);
  }
}
// speedscope's profile title for a thread (its Trace Event importer)
function title(pid, tid) {
  const p = processNames.get(pid), t = threadNames.get(`${pid}:${tid}`);
  if (p != null && t != null) return `${p} (pid ${pid}), ${t} (tid ${tid})`;
  if (p != null) return `${p} (pid ${pid}, tid ${tid})`;
  if (t != null) return `${t} (pid ${pid}, tid ${tid})`;
  return `pid ${pid}, tid ${tid}`;
}
const expected = new Map([...slices.values()].map(s => [title(s.pid, s.tid), s]));
let failures = 0;
const fail = msg => { console.log(`--- ${msg}`); failures++; };
if (expected.size < 2) fail(`the JSON has slices on ${expected.size} thread(s), the test wants a multi-threaded trace`);

const types = {'.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.wasm': 'application/wasm',
               '.json': 'application/json', '.png': 'image/png'};
const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://127.0.0.1');
  const file = url.pathname === '/trace.json' ? tracePath
             : path.join(release, path.normalize(decodeURIComponent(url.pathname)).replace(/^(\.\.[/\\])+/, ''));
  fs.readFile(file, (err, data) => {
    if (err) { res.writeHead(404); res.end(); return; }
    res.writeHead(200, {'content-type': types[path.extname(file)] || 'application/octet-stream'});
    res.end(data);
  });
});
await new Promise(resolve => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${server.address().port}`;
const profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tk-chromium-'));
const browser = await puppeteer.launch({
  executablePath: chromium, headless: true, userDataDir: profileDir, timeout: 60000,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
         '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
try {
  const page = await browser.newPage();
  page.on('pageerror', err => fail(`page error: ${err.message}`));
  await page.setViewport({width: 1400, height: 900});
  await page.goto(`${base}/index.html#profileURL=${encodeURIComponent(`${base}/trace.json`)}`);
  const text = () => page.evaluate(() => document.body.innerText);
  // the toolbar's title: "PROFILE NAME (i/N)" once the trace is imported
  const current = async () => {
    const m = (await text()).match(/^(.*) \((\d+)\/(\d+)\)$/m);
    return m ? {name: m[1], index: +m[2], count: +m[3]} : null;
  };
  await page.waitForFunction(() => /\(\d+\/\d+\)$/m.test(document.body.innerText), {timeout: 30000});
  await page.screenshot({path: path.join(outDir, 'speedscope-time-order.png')});
  const first = await current();
  if (first.count !== expected.size)
    fail(`speedscope shows ${first.count} threads, the JSON has slices on ${expected.size}`);
  await page.keyboard.press('3'); // the sandwich view: a table of every frame
  await page.waitForFunction(() => document.body.innerText.includes('Symbol Name'), {timeout: 15000});
  const seen = new Set();
  for (let i = 0; i < first.count; i++) {
    const cur = await current();
    seen.add(cur.name);
    console.log(`thread ${cur.index}/${cur.count}: ${cur.name}`);
    const want = expected.get(cur.name);
    if (want == null) {
      fail(`speedscope shows a thread "${cur.name}" that the JSON has no slices on`);
    } else {
      for (const name of want.names) {
        // Ctrl+F opens the search box (focused, empty); the table keeps the matching frames
        await page.keyboard.down('Control');
        await page.keyboard.press('f');
        await page.keyboard.up('Control');
        await page.waitForFunction(() => document.activeElement && document.activeElement.tagName === 'INPUT' &&
                                         document.activeElement.placeholder !== 'Filter...', {timeout: 15000});
        await page.keyboard.type(name);
        const found = await page.waitForFunction(n => document.body.innerText.split('\n').some(
          line => line.trim() === n || line.trim().startsWith(`${n} {`)), {timeout: 15000}, name).then(() => true, () => false);
        if (!found) fail(`thread "${cur.name}": slice "${name}" not in speedscope's sandwich view`);
        await page.keyboard.press('Escape'); // closes the search: the whole table again
        await page.waitForFunction(() => document.querySelectorAll('input').length === 1 &&
                                         !document.body.innerText.includes('No symbol names match'), {timeout: 15000});
      }
      console.log(`  slices searched: ${[...want.names].join(', ')}`);
    }
    if (i === 0) await page.screenshot({path: path.join(outDir, 'speedscope-sandwich.png')});
    if (i + 1 < first.count) {
      await page.keyboard.press('n');
      await page.waitForFunction(k => document.body.innerText.includes(`(${k}/`), {timeout: 15000}, cur.index + 1);
    }
  }
  for (const name of expected.keys())
    if (!seen.has(name)) fail(`thread "${name}" (slices in the JSON) not shown by speedscope`);
} finally {
  await browser.close();
  server.close();
  fs.rmSync(profileDir, {recursive: true, force: true});
}
console.log(failures ? `${failures} failure(s)` : `speedscope shows the ${expected.size} threads and their slices`);
process.exit(failures ? 1 : 0);
