// SPDX-License-Identifier: Apache-2.0
// A pa-convert --speedscope file in the real speedscope app: the app's release folder
// and the file served from 127.0.0.1, opened as https://www.speedscope.app opens a
// shared profile (#profileURL=...) in headless Chromium (cdp.js), and read back.
//
//   node tests/browser/speedscope.js APP_DIR PROFILE.json OUT_DIR
//
// Prints (and writes to OUT_DIR/speedscope-app.json) what the app made of the file:
//   title     the toolbar's profile name and "(1/N)"
//   sandwich  the sandwich view's rows, as shown: [total, self, symbol]
//   profiles  per profile, from the app's own Export (its evented format, which it
//             writes from the profiles it built): name, unit, total (its total
//             weight), nonIdle (the time some frame is open: the samples' weights
//             summed) and the three frames with the most self weight
//   errors    exceptions the page threw
// and leaves screenshots of the sandwich and time order views in OUT_DIR.  Exits 1
// with a message when the app does not get that far.
'use strict';

const fs = require('fs');
const http = require('http');
const path = require('path');
const { launch } = require('./cdp');

const TIMEOUT_MS = 30000;

// APP_DIR's files, and PROFILE as /profile.json; nothing outside APP_DIR.
function serve(appDir, profile) {
	const root = path.resolve(appDir);
	const srv = http.createServer((req, res) => {
		let file;
		try {
			const p = decodeURIComponent(new URL(req.url, 'http://localhost').pathname);
			file = p === '/profile.json' ? profile :
				path.resolve(root, '.' + (p === '/' ? '/index.html' : p));
		} catch (e) {
			file = null;
		}
		if (!file || (file !== profile && !file.startsWith(root + path.sep))) {
			res.writeHead(403);
			res.end();
			return;
		}
		fs.readFile(file, (err, data) => {
			if (err) {
				res.writeHead(404);
				res.end();
				return;
			}
			const types = { '.html': 'text/html', '.js': 'text/javascript',
					'.css': 'text/css', '.json': 'application/json' };
			res.writeHead(200, { 'Content-Type': types[path.extname(file)] ||
					     'application/octet-stream' });
			res.end(data);
		});
	});
	return new Promise((resolve) => srv.listen(0, '127.0.0.1', () => resolve(srv)));
}

// Click the toolbar tab whose text ends with label, where a user would.
async function clickTab(page, label) {
	const r = await page.eval(`(() => {
		const t = [...document.querySelectorAll('div')]
			.filter((d) => d.textContent.endsWith(${JSON.stringify(label)})).pop();
		if (!t)
			return null;
		const b = t.getBoundingClientRect();
		return { x: b.x + b.width / 2, y: b.y + b.height / 2 };
	})()`);
	if (!r)
		throw new Error(`no "${label}" tab in the toolbar`);
	await page.click(r.x, r.y);
}

// What an evented profile of the app's export says: its total weight, the weight
// under some open frame, and the frames with the most self weight.
function summarize(p, frames) {
	const self = new Map();
	const stack = [];
	let last = p.startValue, nonIdle = 0;

	for (const ev of p.events) {
		const dt = ev.at - last;
		if (stack.length) {
			nonIdle += dt;
			const top = frames[stack[stack.length - 1]].name;
			self.set(top, (self.get(top) || 0) + dt);
		}
		last = ev.at;
		if (ev.type === 'O')
			stack.push(ev.frame);
		else
			stack.pop();
	}
	const top = [...self].sort((a, b) => b[1] - a[1]).slice(0, 3)
		.map(([name, weight]) => ({ name, weight }));
	return { name: p.name, unit: p.unit, total: p.endValue - p.startValue, nonIdle, top };
}

async function main() {
	const [appDir, profile, outDir] = process.argv.slice(2);
	if (!outDir) {
		console.error('usage: speedscope.js APP_DIR PROFILE.json OUT_DIR');
		process.exit(2);
	}
	fs.mkdirSync(outDir, { recursive: true });
	const srv = await serve(appDir, path.resolve(profile));
	const base = `http://127.0.0.1:${srv.address().port}`;
	const browser = await launch();
	try {
		const url = `${base}/index.html#profileURL=` +
			encodeURIComponent(`${base}/profile.json`) + '&view=sandwich';
		const page = await browser.open(url);
		// The sandwich view's rows: the table after the one headed "Symbol Name".
		const rowsExpr = `(() => {
			const t = [...document.querySelectorAll('table')];
			const rows = t[t.findIndex((t) => /Symbol Name/.test(t.innerText)) + 1];
			return rows && [...rows.rows].map((r) => [...r.cells].map((c) => c.innerText.trim()));
		})()`;
		await page.waitFor(`(${rowsExpr} || []).length > 0`, TIMEOUT_MS);
		const sandwich = await page.eval(rowsExpr);
		const title = await page.eval(`(document.body.innerText.match(/^.*\\(\\d+\\/\\d+\\)$/m) || [''])[0]`);
		await page.screenshot(path.join(outDir, 'speedscope-sandwich.png'));

		await clickTab(page, 'Time Order');
		await page.waitFor(`!/Symbol Name/.test(document.body.innerText) &&
			document.querySelectorAll('canvas').length > 0`, TIMEOUT_MS);
		await new Promise((r) => setTimeout(r, 500)); // a frame or two drawn
		await page.screenshot(path.join(outDir, 'speedscope-time-order.png'));

		// The app saves by clicking a link to a blob: keep the blob instead.
		await page.eval(`(() => {
			window.__paExport = null;
			URL.createObjectURL = (b) => { window.__paExport = b; return 'data:,'; };
			HTMLAnchorElement.prototype.click = function () {};
		})()`);
		await clickTab(page, 'Export');
		await page.waitFor('window.__paExport', TIMEOUT_MS);
		const exported = JSON.parse(await page.eval('window.__paExport.text()'));
		const result = {
			title,
			sandwich,
			profiles: exported.profiles.map((p) => summarize(p, exported.shared.frames)),
			requested: page.requests.some((u) => u === `${base}/profile.json`),
			errors: page.errors,
		};
		fs.writeFileSync(path.join(outDir, 'speedscope-app.json'),
				 JSON.stringify(result, null, 1));
		console.log(JSON.stringify(result));
	} finally {
		await browser.close();
		srv.close();
	}
}

main().catch((e) => {
	console.error(`speedscope.js: ${e.message}`);
	process.exit(1);
});
