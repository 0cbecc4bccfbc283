// Console sessions follow the key file of agentmem serve, driven by
// cmd/agentmem's TestBrowserServeKeyChanges: playwright-core on Debian's
// /usr/bin/chromium, headless. The Go test starts serve and passes, in the
// environment:
//   CONSOLE_URL   the console's base URL (http://127.0.0.1:port/console/)
//   API_URL       the origin serving /api/v1/
//   KEYS_FILE     serve's --keys file, which this script rewrites
//   KEYS_REVOKED  its content without bob's line
//   KEYS_DEMOTED  then, with ops's "admin" role dropped too
//   SHOTS_DIR     where the screenshots go
//   CHROMIUM      the browser binary (default /usr/bin/chromium)
// Each flow prints "ok <name>"; the first failure exits 1 with its reason.
import { launch, finish } from "./lib.mjs";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";

const base = (process.env.CONSOLE_URL || "").replace(/\/$/, "");
const apiBase = (process.env.API_URL || "").replace(/\/$/, "");
const { KEYS_FILE: keysFile, KEYS_REVOKED: revoked, KEYS_DEMOTED: demoted, SHOTS_DIR: shots } = process.env;
assert.ok(base && apiBase && keysFile && revoked && demoted && shots, "run me from go test -run Browser (CONSOLE_URL, API_URL, KEYS_FILE, KEYS_REVOKED, KEYS_DEMOTED, SHOTS_DIR)");

const api = async (method, p, key) => {
  const r = await fetch(apiBase + "/api/v1/" + p, { method, headers: { Authorization: "Bearer " + key } });
  const text = await r.text();
  return { status: r.status, json: text && r.headers.get("content-type")?.includes("json") ? JSON.parse(text) : null };
};
// Rewrite the key file as an operator does: a new file renamed over it.
const writeKeys = (content) => {
  fs.writeFileSync(keysFile + ".new", content, { mode: 0o600 });
  fs.renameSync(keysFile + ".new", keysFile);
};

const browser = await launch();
const shot = (page, name) => page.screenshot({ path: path.join(shots, `console-${name}.png`) });
const signIn = async (page, key) => {
  await page.goto(base + "/signin");
  await page.fill("#key", key);
  await Promise.all([page.waitForURL((u) => !u.pathname.endsWith("/signin")), page.click("button[type=submit]")]);
};
const flow = async (name, fn) => {
  await fn();
  console.log("ok " + name);
};

await finish(browser, async () => {
  const bobCtx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const bob = await bobCtx.newPage();
  const opsCtx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const ops = await opsCtx.newPage();

  await flow("a revoked key's session ends", async () => {
    await signIn(bob, "bob-key");
    await bob.goto(base + "/ns/bob/edit/main/MEMORY.md");
    await bob.fill("textarea#content", "- written after my key was revoked\n");
    writeKeys(revoked);
    assert.equal((await api("GET", "namespaces/bob/files/main/MEMORY.md", "bob-key")).status, 401, "the API refuses the revoked key");
    // The editor was open: its save must write nothing.
    await Promise.all([bob.waitForURL(/\/signin\?revoked=1$/), bob.click("button:text-is('Save')")]);
    await bob.waitForSelector("text=its key is no longer accepted");
    await shot(bob, "revoked");
    const f = await api("GET", "namespaces/bob/files/main/MEMORY.md", "admin-key");
    assert.equal(f.json.content, "- bob's note\n", "a save through a revoked key's session wrote");
    await bob.goto(base + "/ns/bob/");
    assert.match(bob.url(), /\/signin/, "the next page is the sign-in page");
  });

  await flow("a demoted admin's session narrows", async () => {
    await signIn(ops, "ops-key");
    await ops.goto(base + "/ns/alice/");
    await ops.waitForSelector("em.badge:text-is('admin')");
    writeKeys(demoted);
    const apiNs = await api("GET", "namespaces/alice/files", "ops-key");
    assert.equal((await api("GET", "namespaces", "ops-key")).status, 403, "the API refuses the namespaces to a user key");
    const r = await ops.goto(base + "/ns/alice/");
    assert.equal(r.status(), apiNs.status, "another user's namespace answers as the API does");
    assert.notEqual(r.status(), 200);
    assert.equal(await ops.locator("em.badge:text-is('admin')").count(), 0, "no admin badge");
    assert.doesNotMatch(await ops.innerText("main"), /alice's/);
    assert.equal((await ops.goto(base + "/ns/ops/forget")).status(), 403, "the admin pages refuse");
    await ops.goto(base + "/");
    assert.equal(new URL(ops.url()).pathname, new URL(base).pathname + "/ns/ops/", "home is the own notebook now");
    await shot(ops, "demoted");
  });
});
