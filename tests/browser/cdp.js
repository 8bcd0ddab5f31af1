// SPDX-License-Identifier: Apache-2.0
// A minimal Chrome DevTools Protocol driver for the browser tests: Debian's chromium,
// headless, spoken to over --remote-debugging-pipe (fd 3 in, fd 4 out, messages ended
// by a NUL byte), so the tests need no npm package and open no port.
//
//   const { launch } = require('./cdp');
//   const browser = await launch();
//   const page = await browser.open(url);  // resolves after the load event
//   await page.eval('document.title');    // the value (awaits promises)
//   await page.click(x, y); await page.type('text'); await page.key('Enter');
//   await page.waitFor('expression', ms); await page.screenshot(file);
//   page.requests                          // every URL the page asked for
//   await browser.close();
'use strict';

const { spawn } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const CHROMIUM = process.env.CHROMIUM || 'chromium';

class Page {
	constructor(browser, sessionId) {
		this.browser = browser;
		this.sessionId = sessionId;
		this.requests = [];
		this.errors = [];
		this.loaded = null;
	}

	send(method, params) {
		return this.browser.send(method, params, this.sessionId);
	}

	onEvent(msg) {
		if (msg.method === 'Network.requestWillBeSent')
			this.requests.push(msg.params.request.url);
		else if (msg.method === 'Runtime.exceptionThrown')
			this.errors.push(msg.params.exceptionDetails.exception ?
				msg.params.exceptionDetails.exception.description :
				msg.params.exceptionDetails.text);
		else if (msg.method === 'Page.loadEventFired' && this.loaded)
			this.loaded();
	}

	async goto(url, timeoutMs = 30000) {
		const loaded = new Promise((resolve, reject) => {
			const t = setTimeout(() => reject(new Error(`${url}: no load event in ${timeoutMs} ms`)),
					     timeoutMs);
			this.loaded = () => { clearTimeout(t); resolve(); };
		});
		const r = await this.send('Page.navigate', { url });
		if (r.errorText)
			throw new Error(`${url}: ${r.errorText}`);
		await loaded;
		this.loaded = null;
	}

	async eval(expression) {
		const r = await this.send('Runtime.evaluate',
					  { expression, returnByValue: true, awaitPromise: true });
		if (r.exceptionDetails)
			throw new Error(`${expression}: ${r.exceptionDetails.exception ?
				r.exceptionDetails.exception.description : r.exceptionDetails.text}`);
		return r.result.value;
	}

	async waitFor(expression, timeoutMs = 10000) {
		const end = Date.now() + timeoutMs;
		for (;;) {
			const v = await this.eval(expression);
			if (v)
				return v;
			if (Date.now() > end)
				throw new Error(`timed out after ${timeoutMs} ms waiting for ${expression}`);
			await new Promise((r) => setTimeout(r, 50));
		}
	}

	async mouse(type, x, y, extra = {}) {
		await this.send('Input.dispatchMouseEvent',
				{ type, x, y, button: 'left', clickCount: 1, ...extra });
	}

	async click(x, y) {
		await this.mouse('mouseMoved', x, y, { button: 'none' });
		await this.mouse('mousePressed', x, y);
		await this.mouse('mouseReleased', x, y);
	}

	async type(text) {
		await this.send('Input.insertText', { text });
	}

	async key(key) {
		const codes = { Enter: 13, Escape: 27, Backspace: 8 };
		const base = { key, code: key, windowsVirtualKeyCode: codes[key] || 0 };
		await this.send('Input.dispatchKeyEvent',
				{ type: 'keyDown', ...base, text: key === 'Enter' ? '\r' : undefined });
		await this.send('Input.dispatchKeyEvent', { type: 'keyUp', ...base });
	}

	async screenshot(file) {
		/* after the page has painted what it drew */
		await this.eval('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
		const r = await this.send('Page.captureScreenshot', { format: 'png' });
		fs.writeFileSync(file, Buffer.from(r.data, 'base64'));
	}
}

class Browser {
	constructor(proc, profileDir) {
		this.proc = proc;
		this.profileDir = profileDir;
		this.nextId = 1;
		this.pending = new Map();
		this.pages = new Map();
		this.buf = Buffer.alloc(0);
		this.out = proc.stdio[3];
		proc.stdio[4].on('data', (d) => this.onData(d));
		this.exited = new Promise((resolve) => proc.on('exit', resolve));
		proc.on('exit', (code, sig) => {
			for (const { reject } of this.pending.values())
				reject(new Error(`chromium exited (${sig || code})`));
			this.pending.clear();
		});
	}

	onData(d) {
		this.buf = Buffer.concat([this.buf, d]);
		let end;
		while ((end = this.buf.indexOf(0)) >= 0) {
			const msg = JSON.parse(this.buf.subarray(0, end).toString('utf8'));
			this.buf = this.buf.subarray(end + 1);
			if (msg.id !== undefined) {
				const p = this.pending.get(msg.id);
				this.pending.delete(msg.id);
				if (!p)
					continue;
				if (msg.error)
					p.reject(new Error(`${p.method}: ${msg.error.message}`));
				else
					p.resolve(msg.result);
			} else if (msg.sessionId && this.pages.has(msg.sessionId)) {
				this.pages.get(msg.sessionId).onEvent(msg);
			}
		}
	}

	send(method, params = {}, sessionId) {
		const id = this.nextId++;
		const msg = { id, method, params };
		if (sessionId)
			msg.sessionId = sessionId;
		return new Promise((resolve, reject) => {
			this.pending.set(id, { resolve, reject, method });
			this.out.write(JSON.stringify(msg) + '\0');
		});
	}

	async open(url, { width = 1280, height = 800 } = {}) {
		const { targetId } = await this.send('Target.createTarget', { url: 'about:blank' });
		const { sessionId } = await this.send('Target.attachToTarget',
						      { targetId, flatten: true });
		const page = new Page(this, sessionId);
		this.pages.set(sessionId, page);
		await page.send('Page.enable');
		await page.send('Runtime.enable');
		await page.send('Network.enable');
		await page.send('Emulation.setDeviceMetricsOverride',
				{ width, height, deviceScaleFactor: 1, mobile: false });
		await page.goto(url);
		return page;
	}

	async close() {
		try {
			await Promise.race([this.send('Browser.close'),
					    new Promise((r) => setTimeout(r, 2000))]);
		} catch (e) {
			/* it is going anyway */
		}
		const killer = setTimeout(() => this.proc.kill('SIGKILL'), 3000);
		await this.exited;
		clearTimeout(killer);
		fs.rmSync(this.profileDir, { recursive: true, force: true });
	}
}

async function launch({ args = [] } = {}) {
	const profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pa-chromium-'));
	const proc = spawn(CHROMIUM, [
		'--headless=new', '--remote-debugging-pipe', '--no-sandbox', '--disable-gpu',
		'--no-first-run', '--no-default-browser-check', '--disable-extensions',
		'--disable-background-networking', '--disable-component-update',
		'--disable-sync', '--disable-dev-shm-usage', '--hide-scrollbars',
		'--font-render-hinting=none', `--user-data-dir=${profileDir}`, ...args,
		'about:blank',
	], { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
	let stderr = '';
	proc.stderr.on('data', (d) => { stderr = (stderr + d).slice(-4000); });
	const started = new Promise((resolve, reject) => {
		proc.on('error', (e) => reject(new Error(`cannot run ${CHROMIUM}: ${e.message} ` +
							 '(make deps installs chromium)')));
		proc.on('exit', (code) => reject(new Error(`${CHROMIUM} exited with ${code}: ${stderr}`)));
		setTimeout(resolve, 0);
	});
	await started;
	const browser = new Browser(proc, profileDir);
	await Promise.race([browser.send('Browser.getVersion'), started]);
	return browser;
}

module.exports = { launch };
