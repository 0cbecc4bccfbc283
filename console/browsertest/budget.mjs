// What the model pays, folders and navigation, the phone and no
// JavaScript, driven by cmd/agentmem's TestBrowserServeBudget* (go test
// -run Browser): playwright-core on Debian's /usr/bin/chromium, headless,
// one launch. The Go test seeds dana's notebook (it fits, in folders five
// deep) and erin's (it no longer does), starts `agentmem serve`, and
// passes, in the environment:
//   CONSOLE_URL   the console's base URL (http://127.0.0.1:port/console/)
//   API_URL       the origin serving /api/v1/
//   EXPECTED      per namespace, what its notebook page must show, worked
//                 out in Go from the block memory.Snapshot injects
//   SHOTS_DIR     where the screenshots go
//   CHROMIUM      the browser binary (default /usr/bin/chromium)
// Keys: admin-key (root, an admin) and dana-key (dana). Each flow prints
// "ok <name>"; the first failure exits 1 with its reason.
import { launch, finish } from "./lib.mjs";
import assert from "node:assert/strict";
import path from "node:path";

const base = (process.env.CONSOLE_URL || "").replace(/\/$/, "");
const apiBase = (process.env.API_URL || "").replace(/\/$/, "");
const shots = process.env.SHOTS_DIR;
assert.ok(base && apiBase && shots && process.env.EXPECTED, "run me from go test -run Browser (CONSOLE_URL, API_URL, SHOTS_DIR, EXPECTED)");
const expected = JSON.parse(process.env.EXPECTED);

const api = async (p, key) => {
  const r = await fetch(apiBase + "/api/v1/" + p, { headers: { Authorization: "Bearer " + key } });
  return { status: r.status, json: await r.json() };
};
const browser = await launch();
const wide = { width: 1280, height: 800 };
const phone = { width: 390, height: 844 };
const shot = (page, name) => page.screenshot({ path: path.join(shots, `console-${name}.png`) });
const flow = async (name, fn) => {
  await fn();
  assert.deepEqual(cspProblems, [], `the strict CSP, during ${name}`);
  console.log("ok " + name);
};
const signIn = async (page, key) => {
  await page.goto(base + "/signin");
  await page.fill("#key", key);
  await Promise.all([page.waitForURL((u) => !u.pathname.endsWith("/signin")), page.click("button[type=submit]")]);
};
const num = async (page, sel) => Number((await page.innerText(sel)).trim());

// budgetShown checks the notebook page of ns against what the Go test
// worked out from memory.Snapshot's block.
const budgetShown = async (page, ns) => {
  const want = expected[ns];
  for (const [part, [chars, tokens]] of Object.entries(want.parts)) {
    assert.equal(await num(page, `tr[data-part=${part}] td.chars`), chars, `${ns}: ${part} chars`);
    assert.equal(await num(page, `tr[data-part=${part}] td.tokens`), tokens, `${ns}: ${part} tokens`);
  }
  for (const [fig, v] of [["max-tokens", want.max_tokens], ["total-tokens", want.parts.total[1]], ["main-lines", want.main_lines], ["main-shown", want.main_shown],
    ["cut-by-max-lines", want.cut_by_max_lines], ["cut-by-budget", want.cut_by_budget], ["files-listed", want.files_listed]]) {
    assert.equal(await num(page, `[data-figure=${fig}]`), v, `${ns}: ${fig}`);
  }
  assert.equal(await page.locator("#budget-warning").count(), want.fits ? 0 : 1, `${ns}: the warning shows exactly when MEMORY.md no longer fits`);
  assert.equal(await page.textContent("pre.snapshot"), want.block, `${ns}: the block shown is the one injected`);
  assert.match(await page.innerText("#budget"), /one token for every 4 characters/, "the estimate's rule is stated");
  // Each listed file's tokens.
  for (const row of await page.locator("table.files tbody tr").all()) {
    const p = (await row.locator("td").first().innerText()).trim();
    assert.ok(p in want.files, `${ns}: ${p} listed`);
    assert.equal(Number((await row.locator("td").nth(1).innerText()).trim()), want.files[p], `${ns}: ${p}'s tokens`);
  }
};

// strict fails a page whose response lacks the console's CSP, or that
// holds an inline script, an inline style or an event-handler attribute.
const csp = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
const pagesChecked = new Set();
const cspProblems = [];
const strict = (page) => {
  page.on("response", (r) => {
    if (r.request().resourceType() === "document" && r.url().startsWith(base + "/") && r.status() < 300) {
      if (r.headers()["content-security-policy"] !== csp) cspProblems.push(`${r.url()}: CSP ${r.headers()["content-security-policy"]}`);
      pagesChecked.add(new URL(r.url()).pathname);
    }
  });
  page.on("console", (m) => {
    if (/Content Security Policy|Refused to/.test(m.text())) cspProblems.push(`${page.url()}: ${m.text()}`);
  });
};
const noInline = async (page) => {
  assert.equal(await page.locator("script:not([src]), [style], [onclick], [onload], [onerror]").count(), 0, `${page.url()}: inline script or style`);
};

await finish(browser, async () => {
  const ctx = await browser.newContext({ viewport: wide, colorScheme: "light" });
  const page = await ctx.newPage();
  strict(page);
  await signIn(page, "admin-key");

  await flow("what the model pays", async () => {
    await page.goto(base + "/ns/dana/");
    await budgetShown(page, "dana");
    await page.locator("#budget").scrollIntoViewIfNeeded();
    await shot(page, "budget");
    await page.goto(base + "/ns/erin/");
    await budgetShown(page, "erin");
    assert.match(await page.innerText("#budget-warning"), /MEMORY\.md no longer fits/);
    await page.locator("#budget").scrollIntoViewIfNeeded();
    await shot(page, "budget-over");
    // The API answers the same figures the page shows.
    for (const ns of ["dana", "erin"]) {
      const { json } = await api(`namespaces/${ns}/snapshot`, "admin-key");
      const want = expected[ns];
      assert.equal(json.snapshot, want.block);
      for (const [part, [chars, tokens]] of Object.entries(want.parts)) {
        assert.deepEqual(json.budget[part], { chars, tokens }, `API ${ns}: ${part}`);
      }
      assert.equal(json.budget.cut_by_budget, want.cut_by_budget);
      assert.equal(json.budget.main_fits, want.fits);
      for (const [p, tokens] of Object.entries(want.files)) {
        assert.equal((await api(`namespaces/${ns}/files/${p}`, "admin-key")).json.tokens, tokens, `API ${ns}: ${p}'s tokens`);
      }
    }
  });

  await flow("folders and breadcrumbs", async () => {
    await page.goto(base + "/ns/dana/");
    await page.click("a:text-is('by folder')");
    await page.waitForSelector("h1:text-is('dana')");
    await page.click("a:text-is('main/')");
    for (const dir of ["projects/", "2026/"]) {
      await page.click(`table.folder a:text-is('${dir}')`);
    }
    await page.waitForSelector("h1:text-is('main/projects/2026/')");
    assert.deepEqual(await page.locator("nav.crumbs li").allInnerTexts(), ["dana", "main", "projects", "2026"]);
    const rows = await page.locator("table.folder tbody tr").allInnerTexts();
    assert.match(rows[0], /^plan\.md/, "the folder's file");
    assert.match(rows[1], /^q1\/\s+1 file/, "the subfolder, with its files");
    assert.equal(Number((await page.locator("table.folder tr", { hasText: "plan.md" }).locator("td").nth(1).innerText()).trim()), expected.dana.files["main/projects/2026/plan.md"], "a file's tokens");
    await shot(page, "folder");
    await page.click("a:text-is('q1/')");
    await page.click("table.folder a");
    await page.waitForSelector("article.note");
    assert.deepEqual(await page.locator("nav.crumbs li").allInnerTexts(), ["dana", "main", "projects", "2026", "q1", "launch-checklist-for-the-first-public-release-of-the-console.md"]);
    await shot(page, "file-deep");
    await page.click("nav.crumbs a:text-is('projects')");
    await page.waitForSelector("h1:text-is('main/projects/')");
    await page.click("nav.crumbs a:text-is('dana')");
    await page.waitForSelector("h1:text-is('dana')");
  });

  await flow("keyboard", async () => {
    await page.goto(base + "/ns/dana/files/main/people.md");
    await page.keyboard.press("/");
    assert.equal(await page.evaluate(() => document.activeElement && document.activeElement.name), "q", "/ focuses the search box");
    await page.keyboard.type("e");
    assert.equal(new URL(page.url()).pathname, new URL(base).pathname + "/ns/dana/files/main/people.md", "e typed in the search box stays there");
    assert.equal(await page.inputValue("input[name=q]"), "e");
    await page.locator("article.note").click();
    await Promise.all([page.waitForURL(/\/edit\/main\/people\.md$/), page.keyboard.press("e")]);
    await page.waitForSelector("textarea#content");
    await page.focus("textarea#content");
    await page.keyboard.type("e/");
    assert.match(page.url(), /\/edit\/main\/people\.md$/, "keys typed in the editor are text");
    assert.ok((await page.inputValue("textarea#content")).includes("e/"), "typed into the text");
    await page.goto(base + "/ns/dana/");
    await page.keyboard.press("/");
    assert.equal(await page.evaluate(() => document.activeElement.name), "q", "/ on the notebook");
  });

  // Every page the console has for a notebook, at 390 px.
  const pages = [["budget", "/ns/erin/"], ["notebook", "/ns/dana/"], ["tree", "/ns/dana/tree/"], ["folder", "/ns/dana/tree/main/projects/2026"],
    ["file-deep", "/ns/dana/files/main/projects/2026/q1/launch-checklist-for-the-first-public-release-of-the-console.md"],
    ["file-table", "/ns/dana/files/main/projects/2026/plan.md"], ["raw", "/ns/dana/files/main/projects/2026/plan.md?view=raw"],
    ["edit", "/ns/dana/edit/main/travel.md"], ["new", "/ns/dana/new"], ["delete", "/ns/dana/delete/main/travel.md"], ["search", "/ns/dana/search?q=tea"],
    ["history", "/ns/dana/history/"], ["file-history", "/ns/dana/history/main/MEMORY.md"], ["namespaces", "/"]];

  await flow("strict CSP on every page", async () => {
    for (const [, u] of pages) {
      await page.goto(base + u);
      await noInline(page);
    }
    assert.ok(pagesChecked.size >= pages.length, `CSP checked on ${pagesChecked.size} pages`);
    const js = await page.request.get(base + "/static/console.js");
    assert.equal(js.headers()["content-security-policy"], csp, "the script is served under the same CSP");
    assert.match(js.headers()["content-type"], /javascript/);
  });

  await flow("a 390 px phone, every page", async () => {
    const pctx = await browser.newContext({ viewport: phone, isMobile: true, hasTouch: true, colorScheme: "light" });
    const p = await pctx.newPage();
    strict(p);
    await signIn(p, "admin-key");
    for (const [name, u] of pages) {
      await p.goto(base + u);
      await p.waitForLoadState("load");
      const m = await p.evaluate(() => ({ scroll: document.documentElement.scrollWidth, width: window.innerWidth }));
      assert.ok(m.scroll <= phone.width && m.width === phone.width, `${name}: ${m.scroll} px wide (layout ${m.width} px) on a ${phone.width} px screen`);
      if (["budget", "folder", "file-deep"].includes(name)) {
        if (name === "budget") await p.locator("#budget").scrollIntoViewIfNeeded();
        await shot(p, "narrow-" + name);
      }
    }
    await pctx.close();
  });

  await flow("without JavaScript, the main flow", async () => {
    const nctx = await browser.newContext({ viewport: wide, javaScriptEnabled: false, colorScheme: "light" });
    const p = await nctx.newPage();
    strict(p);
    await signIn(p, "dana-key");
    assert.equal(new URL(p.url()).pathname, new URL(base).pathname + "/ns/dana/");
    await budgetShown(p, "dana");
    await p.click("a:text-is('by folder')");
    await p.click("a:text-is('main/')");
    await p.click("table.folder a:text-is('projects/')");
    await p.click("table.folder a:text-is('2026/')");
    await p.click("table.folder a:text-is('plan.md')");
    await p.waitForSelector("article.note table");
    assert.equal(await p.innerText("article.note td >> nth=0"), "Q1", "the note renders on the server");
    await p.click("a:text-is('Edit')");
    await p.fill("textarea#content", "# Plan 2026\n\n- edited without JavaScript\n");
    await p.click("button:text-is('Save')");
    await p.waitForSelector("p.flash:has-text('Saved.')");
    assert.deepEqual(await p.locator("nav.crumbs li").allInnerTexts(), ["dana", "main", "projects", "2026", "plan.md"]);
    await p.click("nav.crumbs a:text-is('2026')");
    const tokens = Number((await p.locator("table.folder tr", { hasText: "plan.md" }).locator("td").nth(1).innerText()).trim());
    assert.equal(tokens, (await api("namespaces/dana/files/main/projects/2026/plan.md", "dana-key")).json.tokens, "the folder shows the new size");
    await p.fill("input[name=q]", "window seat");
    await Promise.all([p.waitForURL(/\/search\?q=/), p.press("input[name=q]", "Enter")]);
    await p.waitForSelector("a:text-is('main/travel.md')");
    await p.click("a:text-is('History')");
    await p.waitForSelector("table.history");
    await p.click("button:text-is('Sign out')");
    await p.waitForURL(/\/signin$/);
    await nctx.close();
  });
});
