// What the browser test scripts share: the browser they launch, the
// console they drive (its API, its sign-in, the flows' reports and
// screenshots), and how they end.
import { chromium } from "playwright-core";
import assert from "node:assert/strict";
import path from "node:path";

// launch starts headless Chromium: Debian's (CHROMIUM, default
// /usr/bin/chromium), never a downloaded one.
export const launch = () =>
  chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  });

// finish runs the flows, then closes the browser and exits: 0, or 1
// after printing the first failure.
export const finish = async (browser, flows) => {
  let exit = 0;
  try {
    await flows();
  } catch (e) {
    console.error("FAIL: " + (e && e.stack ? e.stack : e));
    exit = 1;
  } finally {
    await browser.close();
  }
  process.exit(exit);
};

// consoleURLs are the console's base URL (CONSOLE_URL, without a trailing
// "/") and the origin serving /api/v1/ (API_URL, default the console's).
export const consoleURLs = () => {
  const base = (process.env.CONSOLE_URL || "").replace(/\/$/, "");
  return { base, apiBase: (process.env.API_URL || base).replace(/\/$/, "") };
};

// apiAt returns a caller of the API at apiBase: method, path under
// /api/v1/, key, and a JSON body and headers; it answers the status, the
// ETag and the JSON body.
export const apiAt = (apiBase) => async (method, p, key, { body, headers = {} } = {}) => {
  const r = await fetch(apiBase + "/api/v1/" + p, {
    method,
    headers: { Authorization: "Bearer " + key, ...(body !== undefined ? { "Content-Type": "application/json" } : {}), ...headers },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await r.text();
  return { status: r.status, etag: r.headers.get("etag"), json: text ? JSON.parse(text) : null };
};

// kit is what every flow of browser uses against the console at base:
// contexts whose dialogs fail the flow, screenshots console-<name>.png
// in shots (fullPage for the whole page), flows that report "ok <name>",
// and signing in with a key.
export const kit = (browser, { base, shots, viewport = { width: 1280, height: 800 }, fullPage = false }) => {
  const dialogs = [];
  const newContext = async (opts = {}) => {
    const ctx = await browser.newContext({ viewport, colorScheme: "light", ...opts });
    ctx.on("page", (p) => p.on("dialog", (d) => { dialogs.push(d.message()); d.dismiss(); }));
    return ctx;
  };
  const shot = (page, name) => page.screenshot({ path: path.join(shots, `console-${name}.png`), fullPage });
  const flow = async (name, fn) => {
    await fn();
    assert.deepEqual(dialogs, [], `a dialog fired during ${name}`);
    console.log("ok " + name);
  };
  const signIn = async (page, key) => {
    await page.goto(base + "/signin");
    await page.fill("#key", key);
    await Promise.all([page.waitForURL((u) => !u.pathname.endsWith("/signin")), page.click("button[type=submit]")]);
  };
  return { newContext, shot, flow, signIn };
};
