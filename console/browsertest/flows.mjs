// The console's browser flows, driven by console's TestBrowserFlows (go
// test -run Browser): playwright-core on Debian's /usr/bin/chromium,
// headless, one launch for every flow. The Go test starts the console and
// passes, in the environment:
//   CONSOLE_URL   the console's base URL (http://127.0.0.1:port, or with the
//                 path it is mounted under: http://127.0.0.1:port/console/)
//   API_URL       the origin serving /api/v1/ (default CONSOLE_URL: the
//                 console handler serves both)
//   EVIL_URL      a page on another origin whose form posts to the console
//   EXPIRED_SID   the id of a session the test has expired (or ended)
//   SHOTS_DIR     where the screenshots go
//   CHROMIUM      the browser binary (default /usr/bin/chromium)
// Each flow prints "ok <name>"; the first failure exits 1 with its reason.
// The conflict view's merge flows are in merge.mjs, run last.
import { launch, finish } from "./lib.mjs";
import { mergeFlows } from "./merge.mjs";
import assert from "node:assert/strict";
import { consoleURLs, apiAt, kit } from "./lib.mjs";

const { base } = consoleURLs();
const root = base ? new URL(base).pathname.replace(/\/$/, "") : ""; // the path the console is mounted under
const evil = process.env.EVIL_URL;
const shots = process.env.SHOTS_DIR;
assert.ok(base && evil && shots && process.env.EXPIRED_SID, "run me from go test -run Browser (CONSOLE_URL, EVIL_URL, SHOTS_DIR, EXPIRED_SID)");

const api = apiAt(consoleURLs().apiBase);

// assertMarks checks the search page p shows for query: each result's
// <mark>s are exactly the words the API's search highlights in that
// snippet, in order, each one of the query's words (by its letters, any
// case, or a form of it: "edited" for "edit"), and there is one at least.
const assertMarks = async (p, query, key) => {
  const res = await api("GET", "namespaces/alice/search?q=" + encodeURIComponent(query), key);
  assert.equal(res.status, 200);
  const items = p.locator("ol.results:not(.related) > li");
  assert.equal(await items.count(), res.json.matches.length, "the page lists the API's matches");
  const words = query.toLowerCase().split(/\s+/);
  let seen = 0;
  for (const [i, m] of res.json.matches.entries()) {
    const chars = [...m.snippet];
    const want = m.highlights.map((h) => chars.slice(h.start, h.end).join(""));
    const got = await items.nth(i).locator("pre.snippet mark").allInnerTexts();
    assert.deepEqual(got, want, `${m.path}: the page's marks are the API's highlights`);
    for (const w of got) {
      assert.ok(words.some((q) => w.toLowerCase().startsWith(q.slice(0, 4))), `${m.path}: mark "${w}" is a word of "${query}"`);
    }
    seen += got.length;
  }
  assert.ok(seen > 0, `no word of "${query}" marked`);
};
const browser = await launch();
const { newContext, shot, flow, signIn } = kit(browser, { base, shots });

await finish(browser, async () => {
  const admin = await newContext();
  const page = await admin.newPage();

  await flow("sign in", async () => {
    await page.goto(base + "/ns/alice/");
    assert.match(page.url(), /\/signin/, "no session goes to sign-in");
    await page.fill("#key", "wrong-key");
    await page.click("button[type=submit]");
    await page.waitForSelector("p.error");
    await shot(page, "signin");
    await signIn(page, "admin-key");
    assert.equal(new URL(page.url()).pathname, root + "/");
    const cookies = await admin.cookies();
    const sc = cookies.find((c) => c.name === "agentmem_session");
    assert.ok(sc && sc.httpOnly && sc.sameSite === "Strict", "HttpOnly, SameSite=Strict session cookie");
    assert.equal(await page.evaluate(() => document.cookie), "", "the session cookie is invisible to scripts");
  });

  await flow("browse", async () => {
    await page.waitForSelector("text=Namespaces");
    const row = page.locator("tr", { has: page.locator("a", { hasText: /^alice$/ }) });
    assert.equal((await row.locator("td.num").innerText()).trim(), "2", "alice's file count");
    await shot(page, "namespaces");
    await page.click("a:text-is('alice')");
    await page.waitForSelector("pre.snapshot");
    assert.match(await page.innerText("pre.snapshot"), /lives in Hanoi/, "the snapshot preview shows what the model sees");
    await shot(page, "notebook");
    await page.click("a:text-is('main/MEMORY.md')");
    await page.waitForSelector("article.note");
    assert.match(await page.innerText("article.note li"), /lives in Hanoi/, "rendered as Markdown by default");
  });

  await flow("edit with a conflicting API write", async () => {
    await page.click("a:text-is('Edit')");
    await page.waitForSelector("textarea#content");
    const mine = "- lives in Hanoi\n- prefers green tea\n- typed in the browser\n";
    await page.fill("textarea#content", mine);
    // While the editor is open, the agent writes through the API.
    const cur = await api("GET", "namespaces/alice/files/main/MEMORY.md", "alice-key");
    const put = await api("PUT", "namespaces/alice/files/main/MEMORY.md", "alice-key", {
      body: { content: "- lives in Da Nang\n- prefers green tea\n" },
      headers: { "If-Match": cur.etag },
    });
    assert.equal(put.status, 200);
    await page.click("button:text-is('Save')");
    await page.waitForSelector("text=Conflict on");
    assert.equal(await page.inputValue("textarea#content"), mine, "my text stays in the textarea");
    assert.match(await page.innerText("pre.theirs"), /Da Nang/, "theirs is shown");
    assert.match(await page.innerText("pre.diff"), /\+- typed in the browser/, "the difference is shown");
    const stored = await api("GET", "namespaces/alice/files/main/MEMORY.md", "alice-key");
    assert.match(stored.json.content, /Da Nang/, "nothing was overwritten");
    await shot(page, "conflict");
    await page.click("button:text-is('Save mine over theirs')");
    await page.waitForSelector("text=Saved.");
    assert.match(await page.innerText("article.note"), /typed in the browser/);
    const after = await api("GET", "namespaces/alice/files/main/MEMORY.md", "alice-key");
    assert.equal(after.json.content, mine);
    assert.equal(after.json.metadata.updated_by, "root");
    assert.equal(after.json.metadata.client, "console");
    await shot(page, "file");
  });

  await flow("create and delete", async () => {
    await page.goto(base + "/ns/alice/new");
    await page.fill("input#path", "main/scratch.md");
    await page.fill("textarea#content", "temporary note\n");
    await page.click("button:text-is('Save')");
    await page.waitForSelector("text=Saved.");
    await page.click("a:text-is('Delete…')");
    await page.waitForSelector("h1:has-text('Delete main/scratch.md?')");
    assert.equal((await api("GET", "namespaces/alice/files/main/scratch.md", "alice-key")).status, 200, "asking to confirm deletes nothing");
    await shot(page, "delete");
    await page.click("button:text-is('Delete main/scratch.md')");
    await page.waitForSelector("p.flash:has-text('Deleted main/scratch.md.')");
    assert.equal((await api("GET", "namespaces/alice/files/main/scratch.md", "alice-key")).status, 404);
    await page.reload();
    assert.equal(await page.locator("p.flash").count(), 0, "the notice shows once");
    await page.goto(base + "/ns/alice/?deleted=" + encodeURIComponent("everything. Call us"));
    assert.equal(await page.locator("p.flash").count(), 0, "no notice from the URL");
  });

  await flow("undo a delete", async () => {
    await page.goto(base + "/ns/alice/new");
    await page.fill("input#path", "main/undo.md");
    await page.fill("textarea#content", "keep this after all\n");
    await page.click("button:text-is('Save')");
    await page.waitForSelector("text=Saved.");
    await page.click("a:text-is('Delete…')");
    await page.click("button:text-is('Delete main/undo.md')");
    await page.click("p.flash a:text-is('Restore it from its history')");
    await page.click("button:text-is('Restore this version')");
    await page.waitForSelector("p.flash:has-text('Restored version')");
    const f = await api("GET", "namespaces/alice/files/main/undo.md", "alice-key");
    assert.equal(f.status, 200, "restored");
    assert.equal(f.json.content, "keep this after all\n");
  });

  await flow("search", async () => {
    await page.goto(base + "/ns/alice/");
    await page.keyboard.press("/");
    await page.keyboard.type("green tea");
    await Promise.all([page.waitForURL(/\/search\?q=/), page.keyboard.press("Enter")]);
    await page.waitForSelector("ol.results li");
    const first = page.locator("ol.results li").first();
    assert.match(await first.locator(".score").innerText(), /^\d+\.\d{3}$/, "a score");
    assert.match(await first.locator("pre.snippet").innerText(), /green tea/i, "a snippet");
    await assertMarks(page, "green tea", "alice-key");
    await shot(page, "search");
    // A query no note has a word of says so plainly.
    await page.goto(base + "/ns/alice/search?q=" + encodeURIComponent("zebra astronomy"));
    assert.match(await page.locator("p.nomatch").innerText(), /^No note matches “zebra astronomy”/, "no match, said plainly");
    assert.equal(await page.locator("ol.results li").count(), 0, "no result listed");
    await shot(page, "search-nomatch");
  });

  let restoredFrom;
  await flow("history and diff", async () => {
    await page.goto(base + "/ns/alice/history/main/MEMORY.md");
    const rows = page.locator("table.history tbody tr");
    assert.ok((await rows.count()) >= 3, "three versions at least");
    // Compare the oldest with the newest.
    await rows.last().locator("input[name=from]").check();
    await rows.first().locator("input[name=to]").check();
    await page.click("button:text-is('Compare selected')");
    await page.waitForSelector("pre.diff");
    const diff = await page.innerText("pre.diff");
    assert.match(diff, /-- likes tea/);
    assert.match(diff, /\+- typed in the browser/);
    await shot(page, "diff");
    await page.goto(base + "/ns/alice/history/");
    assert.match(await page.innerText("table.history"), /root[\s\S]*via console/, "who made the change");
    await shot(page, "history");
    await page.goto(base + "/ns/alice/history/main/MEMORY.md");
    restoredFrom = await rows.last().locator("input[name=from]").getAttribute("value");
  });

  await flow("restore, double submitted", async () => {
    await page.goto(base + "/ns/alice/versions/main/MEMORY.md?v=" + encodeURIComponent(restoredFrom));
    const form = page.locator("form", { has: page.locator("button:text-is('Restore this version')") });
    const fields = {};
    for (const n of ["path", "version", "current", "token"]) fields[n] = await form.locator(`input[name=${n}]`).getAttribute("value");
    await page.click("button:text-is('Restore this version')");
    await page.waitForSelector("text=Restored version");
    // The same form submitted again (a double click, a resent POST).
    const again = await page.request.post(base + "/ns/alice/restore", { form: fields, maxRedirects: 0 });
    assert.equal(again.status(), 303, "the replayed submit answers as the first did");
    const hist = await api("GET", "namespaces/alice/history/main/MEMORY.md", "alice-key");
    const restores = hist.json.entries.filter((e) => e.kind === "restore");
    assert.equal(restores.length, 1, "restored once");
    assert.match((await api("GET", "namespaces/alice/files/main/MEMORY.md", "alice-key")).json.content, /likes tea/);
  });

  await flow("stored markup renders inert", async () => {
    for (const u of ["/", "/ns/mallory/", "/ns/mallory/files/main/evil.md", "/ns/mallory/edit/main/evil.md", "/ns/mallory/history/",
      "/ns/mallory/history/main/evil.md", "/ns/mallory/versions/main/evil.md?v=" + encodeURIComponent(process.env.EVIL_VERSION),
      "/ns/mallory/search?q=" + encodeURIComponent('<img src=x onerror="alert(3)"> pwned')]) {
      await page.goto(base + u);
      await page.waitForLoadState("load");
      const bad = await page.evaluate(() => ({
        pwned: window.__pwned === 1,
        img: document.querySelectorAll("img").length,
        scripts: [...document.scripts].filter((s) => !s.src.endsWith("/static/console.js")).length,
        marked: document.querySelectorAll("[data-pwned], b.pwned").length,
      }));
      assert.deepEqual(bad, { pwned: false, img: 0, scripts: 0, marked: 0 }, `markup from storage became DOM on ${u}`);
    }
    await page.goto(base + "/ns/mallory/files/main/evil.md?view=raw");
    assert.match(await page.innerText("pre.content"), /<script>window.__pwned=1/, "shown as text");
    assert.match(await page.innerText("table.meta"), /<img src=x onerror="alert\(2\)">/, "metadata shown as text");
    await page.goto(base + "/ns/mallory/search?q=pwned");
    assert.match(await page.innerText("pre.snippet"), /<b class="pwned" data-pwned>pwned<\/b>/, "a snippet shown as text");
  });

  await flow("a note renders as Markdown, inert", async () => {
    const u = base + "/ns/mallory/files/main/links.md";
    const resp = await page.goto(u);
    assert.match(resp.headers()["content-security-policy"], /script-src 'self'/, "the strict CSP");
    assert.equal(await page.innerText(".note h1"), "Links and images", "a heading");
    assert.equal(await page.locator(".note li").count(), 2, "a list");
    assert.equal(await page.innerText(".note table td >> nth=1"), "2", "a table");
    assert.match(await page.innerText(".note pre"), /code <b>stays<\/b> text/, "code stays text");
    const bad = await page.evaluate(() => ({
      pwned: window.__pwned === 1,
      img: document.querySelectorAll("img").length,
      scripts: [...document.scripts].filter((s) => !s.src.endsWith("/static/console.js")).length,
      handlers: [...document.querySelectorAll("*")].flatMap((el) => [...el.attributes].map((a) => a.name)).filter((n) => n.startsWith("on")).length,
      links: [...document.querySelectorAll(".note a")].map((a) => new URL(a.href).protocol).filter((p) => !["http:", "https:", "mailto:"].includes(p)),
    }));
    assert.deepEqual(bad, { pwned: false, img: 0, scripts: 0, handlers: 0, links: [] }, "the note's markup became active");
    assert.equal(await page.locator(".note a", { hasText: "click me" }).count(), 0, "a javascript: link is no link");
    await page.click(".note >> text=click me"); // only text: nothing happens
    assert.equal(page.url(), u, "clicking a neutralised link goes nowhere");
    assert.equal(await page.getAttribute(".note a:text-is('safe link')", "href"), "https://example.com/", "a safe link keeps its destination");
    assert.equal(await page.$eval(".note a:text-is('sibling note')", (a) => new URL(a.href).pathname), root + "/ns/mallory/files/main/evil.md", "a relative link reaches its sibling");
    assert.equal(await page.getAttribute(".note a.image", "href"), "https://example.com/p.png", "an image is a link to it, loaded never");
    await page.waitForSelector("p.warn >> text=holds HTML");
    await shot(page, "file-rendered");
    await page.click("nav.views a:text-is('Raw')");
    assert.match(await page.innerText("pre.content"), /<script>window.__pwned=1/, "the raw view, one click away");
    await page.click("a:text-is('Edit')");
    assert.match(await page.inputValue("textarea[name=content]"), /\[click me\]\(javascript:/, "the editor, one click away");
    assert.equal(await page.evaluate(() => window.__pwned), undefined, "nothing ran");
    // Without JavaScript: rendered on the server, the raw view a link.
    const noJS = await newContext({ javaScriptEnabled: false });
    const q = await noJS.newPage();
    await signIn(q, "admin-key");
    await q.goto(u);
    assert.equal(await q.innerText(".note h1"), "Links and images", "rendered without JavaScript");
    await q.click("nav.views a:text-is('Raw')");
    assert.match(await q.innerText("pre.content"), /\[click me\]/, "the raw view without JavaScript");
    await noJS.close();
  });

  await flow("cross-origin POST refused", async () => {
    const before = await api("GET", "namespaces/alice/files/main/MEMORY.md", "alice-key");
    await page.goto(evil);
    const [resp] = await Promise.all([page.waitForResponse((r) => r.url().startsWith(base)), page.click("button")]);
    assert.equal(resp.status(), 403, "the console refuses a cross-origin form post");
    const after = await api("GET", "namespaces/alice/files/main/MEMORY.md", "alice-key");
    assert.equal(after.status, 200, "the file is still there");
    assert.equal(after.etag, before.etag, "and unchanged");
  });

  await flow("expired and unknown sessions go to sign-in", async () => {
    const host = new URL(base).hostname;
    for (const [sid, name] of [[process.env.EXPIRED_SID, "expired"], ["no-such-session-" + "x".repeat(30), "unknown"]]) {
      const ctx = await newContext();
      await ctx.addCookies([{ name: "agentmem_session", value: sid, domain: host, path: "/", httpOnly: true, sameSite: "Strict" }]);
      const p = await ctx.newPage();
      await p.goto(base + "/ns/alice/files/main/MEMORY.md");
      assert.match(p.url(), /\/signin\?expired=1$/, `${name} session`);
      await p.waitForSelector("text=Your session ended");
      await ctx.close();
    }
  });

  await flow("user key, JavaScript off", async () => {
    const ctx = await newContext({ javaScriptEnabled: false });
    const p = await ctx.newPage();
    await signIn(p, "alice-key");
    assert.equal(new URL(p.url()).pathname, root + "/ns/alice/");
    assert.equal(await p.locator("a:text-is('Namespaces')").count(), 0, "no admin pages for a user");
    const r = await p.goto(base + "/ns/bob/");
    assert.equal(r.status(), 404, "another user's namespace is not there");
    await p.goto(base + "/ns/alice/edit/main/MEMORY.md");
    await p.fill("textarea#content", "- edited without JavaScript\n");
    await p.click("button:text-is('Save')");
    await p.waitForSelector("text=Saved.");
    const f = await api("GET", "namespaces/alice/files/main/MEMORY.md", "alice-key");
    assert.equal(f.json.content, "- edited without JavaScript\n");
    assert.equal(f.json.metadata.updated_by, "alice");
    await p.goto(base + "/ns/alice/search?q=" + encodeURIComponent("javascript"));
    await assertMarks(p, "javascript", "alice-key"); // server-rendered: the same marks without JavaScript
    await p.click("button:text-is('Sign out')");
    await p.waitForURL(/\/signin$/);
    await p.goto(base + "/ns/alice/");
    assert.match(p.url(), /\/signin/, "signed out");
    await ctx.close();
  });

  await flow("forget behind a typed confirmation", async () => {
    await page.goto(base + "/ns/bob/");
    await page.click("a:text-is('Forget…')");
    await page.fill("input#confirm", "bo");
    await page.click("button:text-is('Forget bob')");
    await page.waitForSelector("text=Type the namespace's name exactly");
    assert.equal((await api("GET", "namespaces/bob/files/main/MEMORY.md", "admin-key")).status, 200, "a mistyped name erases nothing");
    await page.fill("input#confirm", "bob");
    await shot(page, "forget");
    await page.click("button:text-is('Forget bob')");
    await page.waitForSelector("text=Forgot bob");
    assert.match(await page.innerText("main"), /1 file deleted/);
    assert.equal((await api("GET", "namespaces/bob/files/main/MEMORY.md", "admin-key")).status, 404);
  });

  await flow("export download", async () => {
    await page.goto(base + "/ns/alice/");
    const [dl] = await Promise.all([page.waitForEvent("download"), page.click("a:text-is('Export (.tar)')")]);
    assert.equal(dl.suggestedFilename(), "alice.tar");
  });

  await flow("import upload", async () => {
    await page.goto(base + "/ns/alice/");
    const [dl] = await Promise.all([page.waitForEvent("download"), page.click("a:text-is('Export (.tar)')")]);
    await page.setInputFiles("form.import input[type=file]", await dl.path());
    await page.click("form.import button[type=submit]");
    await page.waitForSelector("h1:text-is('Imported into alice')");
    const text = await page.textContent("main");
    assert.ok(text.includes("0 created, 0 replaced") && text.includes("unchanged"), text);
    await shot(page, "import");
  });

  await flow("consolidate, JavaScript off", async () => {
    const ctx = await newContext({ javaScriptEnabled: false });
    const p = await ctx.newPage();
    await signIn(p, "admin-key");
    await p.goto(base + "/ns/carol/");
    const before = await api("GET", "namespaces/carol/files/main/MEMORY.md", "admin-key");
    await p.click("form.consolidate button:text-is('Preview')");
    await p.waitForSelector("h1:has-text('Consolidation preview')");
    assert.match(await p.innerText("pre.diff"), /\+- lives in Da Nang/, "the proposed change is shown");
    assert.match(await p.innerText("main"), /Nothing was written/);
    assert.equal((await api("GET", "namespaces/carol/files/main/MEMORY.md", "admin-key")).etag, before.etag, "a preview writes nothing");
    await shot(p, "consolidate-preview");
    await p.click("form.consolidate button:text-is('Apply')");
    await p.waitForSelector("h1:has-text('Consolidated')");
    assert.match(await p.innerText("main"), /3 edits applied/);
    assert.match(await p.innerText("pre.diff"), /\+- lives in Da Nang/, "what was applied is shown");
    const f = await api("GET", "namespaces/carol/files/main/MEMORY.md", "admin-key");
    assert.match(f.json.content, /lives in Da Nang/);
    assert.equal(f.json.metadata.updated_by, "agentmem-consolidator/scripted-1");
    assert.equal(f.json.metadata.requested_by, "root");
    await ctx.close();
  });

  await flow("narrow viewport", async () => {
    // A phone: every main page fits its width (no sideways scrolling),
    // the namespaces' action links stay in their row.
    const narrow = { width: 390, height: 844 };
    const ctx = await newContext({ viewport: narrow, isMobile: true, hasTouch: true });
    const p = await ctx.newPage();
    const fits = async (name) => {
      await p.waitForLoadState("load");
      // A phone widens the layout to fit what overflows: innerWidth grows too.
      const m = await p.evaluate(() => ({ scroll: document.documentElement.scrollWidth, width: window.innerWidth }));
      assert.ok(m.scroll <= narrow.width && m.width === narrow.width, `${name}: the page is ${m.scroll} px wide (layout ${m.width} px) on a ${narrow.width} px screen`);
      await shot(p, "narrow-" + name);
    };
    await p.goto(base + "/signin");
    await fits("signin");
    await signIn(p, "admin-key");
    await fits("namespaces");
    // The namespaces' action links stay in their row, on the screen: none
    // needs the table scrolled sideways.
    const wrap = await p.locator(".table-wrap").first().boundingBox();
    for (const row of await p.locator("table tbody tr").all()) {
      const r = await row.boundingBox();
      for (const a of await row.locator("td.links a").all()) {
        const b = await a.boundingBox();
        assert.ok(b.y >= r.y - 1 && b.y + b.height <= r.y + r.height + 1, `an action link sits outside its row (${b.y} in ${r.y}..${r.y + r.height})`);
        assert.ok(b.x + b.width <= wrap.x + wrap.width, `an action link ends at ${b.x + b.width} px, past the table's edge at ${wrap.x + wrap.width} px`);
      }
    }
    const pages = [["notebook", "/ns/alice/"], ["file", "/ns/alice/files/main/MEMORY.md"], ["file-rendered", "/ns/mallory/files/main/links.md"], ["edit", "/ns/alice/edit/main/MEMORY.md"],
      ["history", "/ns/alice/history/"], ["file-history", "/ns/alice/history/main/MEMORY.md"], ["search", "/ns/alice/search?q=tea"],
      ["delete", "/ns/alice/delete/main/MEMORY.md"], ["new", "/ns/alice/new"], ["forget", "/ns/alice/forget"]];
    for (const [name, u] of pages) {
      await p.goto(base + u);
      await fits(name);
    }
    // Two versions compared, as on a desktop.
    await p.goto(base + "/ns/alice/history/main/MEMORY.md");
    const versions = p.locator("table.history tbody tr");
    await versions.last().locator("input[name=from]").check();
    await versions.first().locator("input[name=to]").check();
    await p.click("button:text-is('Compare selected')");
    await p.waitForSelector("pre.diff");
    await fits("diff");
    await p.goto(base + "/ns/alice/history/main/MEMORY.md");
    await p.locator("table.history tbody tr").last().locator("input[name=from]").check();
    await p.click("button:text-is('Compare selected')");
    await p.waitForSelector("pre.diff");
    await fits("diff");
    const icon = await p.request.get(base + "/favicon.ico");
    assert.equal(icon.status(), 200, "the favicon");
    await ctx.close();
  });

  await mergeFlows({ base, api, newContext, flow, signIn, shots }); // merge.mjs: the conflict view's three-way merge
});
