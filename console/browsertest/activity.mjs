// The browser flows of what history tells (issue 38): the deleted view
// with its restore, the activity by client and by user, and the
// namespaces' sizes and last activity. Run after flows.mjs by console's
// TestBrowserFlows and by agentmem serve's browser tests (SQLite,
// PostgreSQL), with the same environment (CONSOLE_URL, API_URL, SHOTS_DIR,
// CHROMIUM) and keys (admin-key: an admin; alice-key: the user alice).
// Each flow prints "ok <name>"; the first failure exits 1 with its reason.
import { launch, finish, consoleURLs, apiAt, kit } from "./lib.mjs";
import assert from "node:assert/strict";

const { base, apiBase } = consoleURLs();
const shots = process.env.SHOTS_DIR;
assert.ok(base && shots, "run me from go test -run Browser (CONSOLE_URL, SHOTS_DIR)");
const api = apiAt(apiBase);

// history is every recorded change of namespace ns, paged through the API.
const history = async (ns, key) => {
  const out = [];
  let cursor = "";
  for (;;) {
    const r = await api("GET", `namespaces/${ns}/history?limit=50` + (cursor ? "&cursor=" + encodeURIComponent(cursor) : ""), key);
    assert.equal(r.status, 200, "the history pages");
    out.push(...r.json.entries);
    if (!(cursor = r.json.next_cursor)) return out;
  }
};

const browser = await launch();
const wide = { width: 1280, height: 800 };
const narrow = { width: 390, height: 844 };
const { newContext, shot, flow, signIn } = kit(browser, { base, shots, viewport: wide, fullPage: true });
// fits checks that the page needs no sideways scrolling at its width.
const fits = async (p, name, width) => {
  await p.waitForLoadState("load");
  const m = await p.evaluate(() => ({ scroll: document.documentElement.scrollWidth, width: window.innerWidth }));
  assert.ok(m.scroll <= width && m.width === width, `${name}: the page is ${m.scroll} px wide (layout ${m.width} px) on a ${width} px screen`);
};
const runes = (s) => [...s].length;

await finish(browser, async () => {
  // Without JavaScript: the deleted view and its restore are forms.
  const user = await newContext({ javaScriptEnabled: false });
  const page = await user.newPage();
  await signIn(page, "alice-key");
  const content = "# Trip\n\n- Da Nang in June — window seat\n- 🧳 pack light\n";

  await flow("delete then restore from the deleted view", async () => {
    await page.goto(base + "/ns/alice/new");
    await page.fill("input#path", "main/trip.md");
    await page.fill("textarea#content", content);
    await page.click("button:text-is('Save')");
    await page.waitForSelector("text=Saved.");
    // A second file, deleted through the API by the admin.
    const put = await api("PUT", "namespaces/alice/files/main/scratch-api.md", "admin-key", { body: { content: "from the API\n" }, headers: { "If-None-Match": "*" } });
    assert.equal(put.status, 201);
    assert.equal((await api("DELETE", "namespaces/alice/files/main/scratch-api.md", "admin-key", { headers: { "If-Match": put.etag } })).status, 204);
    await page.goto(base + "/ns/alice/files/main/trip.md");
    await page.click("a:text-is('Delete…')");
    await page.click("button:text-is('Delete main/trip.md')");
    await page.waitForSelector("p.flash:has-text('Deleted main/trip.md.')");
    assert.equal((await api("GET", "namespaces/alice/files/main/trip.md", "alice-key")).status, 404, "deleted");

    await page.click("header nav a:text-is('Deleted')");
    await page.waitForSelector("h1:text-is('Deleted in alice')");
    const row = page.locator("table.deleted tbody tr", { has: page.locator("a:text-is('main/trip.md')") });
    assert.equal(await row.count(), 1, "the deleted file is listed");
    assert.match(await row.innerText(), /alice\s+via console/, "who deleted it, through what");
    assert.match(await row.locator(".when").innerText(), /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/, "when");
    const apiRow = page.locator("table.deleted tbody tr", { has: page.locator("a:text-is('main/scratch-api.md')") });
    assert.match(await apiRow.innerText(), /root\s+via/, "the admin's API delete, with who made it");
    // The listing is the API's.
    const listed = await api("GET", "namespaces/alice/deleted", "alice-key");
    assert.equal(listed.status, 200);
    const trip = listed.json.files.find((f) => f.path === "main/trip.md");
    assert.ok(trip && trip.restorable && trip.chars === runes(content) && trip.metadata.updated_by === "alice" && trip.metadata.client === "console", JSON.stringify(trip));
    assert.equal(listed.json.files[0].path, "main/trip.md", "the newest delete first");
    await fits(page, "deleted", wide.width);
    await shot(page, "deleted");

    const form = row.locator("form.restore");
    const fields = {};
    for (const n of ["path", "version", "current", "token"]) fields[n] = await form.locator(`input[name=${n}]`).getAttribute("value");
    assert.equal(fields.version, trip.previous, "the restore writes back the version the delete replaced");
    await row.locator("button:text-is('Restore')").click();
    await page.waitForSelector("p.flash:has-text('Restored version')");
    // The same form again (a double click, a resent POST): applied once.
    const again = await page.request.post(base + "/ns/alice/restore", { form: fields, maxRedirects: 0 });
    assert.equal(again.status(), 303, "the replayed submit answers as the first did");
    const f = await api("GET", "namespaces/alice/files/main/trip.md", "alice-key");
    assert.equal(f.status, 200, "restored");
    assert.equal(f.json.content, content, "the exact content is back");
    const kinds = (await api("GET", "namespaces/alice/history/main/trip.md", "alice-key")).json.entries.map((e) => e.kind);
    assert.deepEqual(kinds, ["restore", "delete", "write"], "the delete and one restore are recorded");
    await page.goto(base + "/ns/alice/deleted");
    assert.equal(await page.locator("table.deleted a:text-is('main/trip.md')").count(), 0, "restored: no longer deleted");
    assert.equal(await page.locator("table.deleted a:text-is('main/scratch-api.md')").count(), 1, "the other is still there");
  });

  await flow("activity counts equal the history", async () => {
    // Counted here from the API's history, by the rule the page states.
    const entries = await history("alice", "alice-key");
    assert.ok(entries.length > 5, "a history to count");
    const tally = (key) => {
      const m = new Map();
      for (const e of entries) {
        const k = key(e.metadata || {});
        const t = m.get(k) || { changes: 0, writes: 0, deletes: 0, restores: 0, last: 0 };
        t.changes++;
        t[e.kind + "s"]++;
        t.last = Math.max(t.last, Date.parse(e.time)); // RFC 3339 strings of varying precision do not sort as text
        m.set(k, t);
      }
      return m;
    };
    const clientOf = (md) => ((md.updated_by || "").startsWith("agentmem-consolidator/") ? "consolidator" : md.client || "");
    const clients = tally(clientOf);
    const users = tally((md) => md.updated_by || "");
    assert.ok(clients.has("console") && clients.size >= 3, "several clients wrote: " + [...clients.keys()]);

    const a = (await api("GET", "namespaces/alice/activity?limit=200", "alice-key")).json;
    assert.equal(a.changes, entries.length, "every change counted");
    for (const [name, rows, want] of [["clients", a.clients, clients], ["users", a.users, users]]) {
      assert.equal(rows.length, want.size, `${name}: one row each`);
      for (const r of rows) {
        const w = want.get(r.name);
        assert.ok(w, `${name}: ${r.name} is not in the history`);
        assert.deepEqual([r.changes, r.writes, r.deletes, r.restores], [w.changes, w.writes, w.deletes, w.restores], `${name} ${r.name}`);
        assert.equal(Date.parse(r.last_change), w.last, `${name} ${r.name}: the last write`);
      }
    }
    assert.equal(a.recent.length, Math.min(200, entries.length));
    assert.equal(a.recent[0].path, "main/trip.md", "the newest change first: the restore");

    await page.click("header nav a:text-is('Activity')");
    await page.waitForSelector("h1:text-is('Activity in alice')");
    for (const [kind, want] of [["client", clients], ["user", users]]) {
      const shown = new Map();
      for (const tr of await page.locator(`table.counts.${kind} tbody tr`).all()) {
        const name = (await tr.locator("td.name").innerText()).trim();
        shown.set(name === "none recorded" ? "" : name, Number(await tr.locator("td.changes").innerText()));
      }
      assert.deepEqual(Object.fromEntries(shown), Object.fromEntries([...want].map(([k, v]) => [k, v.changes])), `the page's counts by ${kind}`);
    }
    assert.match(await page.locator("table.recent tbody tr").first().innerText(), /main\/trip\.md[\s\S]*restore[\s\S]*alice\s+via console/, "the newest change first");
    await fits(page, "activity", wide.width);
    await shot(page, "activity");
  });

  await flow("namespaces show size, tokens and last activity", async () => {
    const admin = await newContext();
    const p = await admin.newPage();
    await signIn(p, "admin-key");
    // Computed here: every file of alice's read through the API.
    let chars = 0, files = 0, tokens = 0;
    const list = await api("GET", "namespaces/alice/files?limit=1000", "admin-key");
    for (const f of list.json.files) {
      const r = await api("GET", "namespaces/alice/files/" + f.path, "admin-key");
      files++;
      chars += runes(r.json.content);
      if (f.path === "main/MEMORY.md") tokens = Math.ceil(runes(r.json.content) / 4);
    }
    const entries = await history("alice", "admin-key");
    const newest = entries.reduce((a, b) => (Date.parse(b.time) > Date.parse(a.time) ? b : a));
    const row = p.locator("table.ns tbody tr", { has: p.locator("a:text-is('alice')") });
    assert.equal(Number(await row.locator("td.num").innerText()), files, "files");
    assert.equal(Number(await row.locator("td.qty.opt").innerText()), chars, "size in characters");
    assert.equal(Number(await row.locator("td.tokens").innerText()), tokens, "MEMORY.md's tokens: characters / 4, rounded up");
    assert.match(await row.locator(".when").innerText(), new RegExp(newest.metadata.updated_by + "(\\s+via " + (newest.metadata.client || "") + ")?"), "who changed it last");
    await row.locator("a:text-is('Activity')").click();
    await p.waitForSelector("h1:text-is('Activity in alice')");
    await admin.close();
  });

  await flow("deleted and activity on a phone", async () => {
    const ctx = await newContext({ viewport: narrow, isMobile: true, hasTouch: true });
    const p = await ctx.newPage();
    await signIn(p, "alice-key");
    for (const name of ["deleted", "activity"]) {
      await p.goto(base + "/ns/alice/" + name);
      await fits(p, name, narrow.width);
      await shot(p, "narrow-" + name);
    }
    // The strict CSP on both.
    for (const name of ["deleted", "activity"]) {
      const r = await p.goto(base + "/ns/alice/" + name);
      assert.match(r.headers()["content-security-policy"], /script-src 'self'/);
    }
    await ctx.close();
  });
  await user.close();
});
