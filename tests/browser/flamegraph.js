// SPDX-License-Identifier: Apache-2.0
// Open a pa-convert --flamegraph page in headless Chromium, use it as a person would
// (click a frame, search), and print what was seen as one JSON object; the bats suite
// (tests/flamegraph.bats) checks each fact.
//
//   node tests/browser/flamegraph.js PAGE.html SHOT.png FRAME SEARCH
//
// FRAME is the frame to click (the first drawn frame of that name); SEARCH the
// regex typed into the search box.  Screenshots: SHOT.png before, SHOT-zoom.png after
// the click, SHOT-search.png after the search.
'use strict';

const path = require('path');
const { launch } = require('./cdp');

async function main() {
	const [page, shot, frame, search] = process.argv.slice(2);
	const url = 'file://' + path.resolve(page);
	const facts = {};
	const browser = await launch();
	try {
		const t0 = Date.now();
		const p = await browser.open(url);
		await p.waitFor('window.paFlame && window.paFlame.ready', 20000);
		facts.openMs = Date.now() - t0;
		facts.firstDrawMs = await p.eval('window.paFlame.firstDrawMs');
		facts.readyMs = await p.eval('window.paFlame.readyMs');
		facts.title = await p.eval('document.getElementById("title").textContent');
		facts.meta = await p.eval('document.getElementById("meta").textContent');
		facts.legend = await p.eval('document.getElementById("legend").textContent');
		facts.width = await p.eval('window.paFlame.width()');
		const frames = await p.eval('window.paFlame.frames()');
		facts.drawn = frames.length;
		facts.kinds = [...new Set(frames.map((f) => f.kind))].sort();
		/* the top frame: the widest leaf-most one, i.e. the widest frame with no
		 * frame drawn right above it in its column */
		facts.frames = frames.filter((f) => f.w >= 40).map((f) => ({ name: f.name, w: f.w, kind: f.kind, color: f.color }));
		await p.screenshot(shot);

		const target = frames.find((f) => f.name === frame);
		facts.clickTarget = target ? { w: target.w } : null;
		if (target) {
			/* In view first: with deep stacks (kernel frames above the leaf) the graph is
			 * taller than the window, and a click below its edge reaches nothing. */
			await p.eval(`window.scrollTo(0, Math.max(0, ${target.y} - 300))`);
			await p.eval('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
			const t1 = Date.now();
			await p.click(target.x + target.w / 2, target.y + target.h / 2 - await p.eval('window.scrollY'));
			facts.clickMs = Date.now() - t1;
			facts.zoomDrawMs = await p.eval('window.paFlame.lastDrawMs');
			const after = await p.eval('window.paFlame.frames()');
			const z = after.find((f) => f.name === frame);
			facts.zoomed = z ? { w: z.w, x: z.x } : null;
			facts.sandwichButton = await p.eval('document.getElementById("sandwich").textContent');
			await p.screenshot(shot.replace(/\.png$/, '') + '-zoom.png');
			await p.eval('document.getElementById("sandwich").click()');
			const sw = await p.eval('window.paFlame.frames()');
			facts.sandwich = {
				titles: await p.eval('[...document.querySelectorAll(".graph h2")].map((h) => h.textContent)'),
				callers: sw.filter((f) => f.graph === 0).map((f) => f.name),
				callees: sw.filter((f) => f.graph === 1).map((f) => f.name),
			};
			await p.screenshot(shot.replace(/\.png$/, '') + '-sandwich.png');
			await p.key('Escape');
			const reset = await p.eval('window.paFlame.frames()');
			const r = reset.find((f) => f.name === frame);
			facts.reset = r ? { w: r.w } : null;
		}

		await p.eval('document.getElementById("search").focus()');
		await p.type(search);
		await p.key('Enter');
		facts.matched = await p.eval('document.getElementById("matched").textContent');
		const hl = await p.eval('window.paFlame.frames()');
		facts.highlighted = [...new Set(hl.filter((f) => new RegExp(search).test(f.name)).map((f) => f.color))];
		await p.screenshot(shot.replace(/\.png$/, '') + '-search.png');

		facts.requests = p.requests.filter((u) => u !== url && !u.startsWith('data:'));
		facts.errors = p.errors;
	} finally {
		await browser.close();
	}
	process.stdout.write(JSON.stringify(facts, null, 1) + '\n');
}

main().catch((e) => {
	console.error('flamegraph.js: ' + (e.stack || e));
	process.exit(1);
});
