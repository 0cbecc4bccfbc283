// The browser flows of a file's lifetime (issue 39): pinning a file and
// giving one an expiry through the file page's form (JavaScript off), the
// marks the file page, the notebook's listing and what the model sees
// show, the editor's save keeping both, and a file that expired: its
// history shows the expiry, and its last version restores. Run by
// console's TestBrowserFlows with CONSOLE_URL, API_URL, SHOTS_DIR and
// CHROMIUM; keys: alice-key (the user alice). Each flow prints
// "ok <name>"; the first failure exits 1 with its reason.
import { launch, finish, consoleURLs, apiAt, kit } from "./lib.mjs";
import assert from "node:assert/strict";

const { base, apiBase } = consoleURLs();
const shots = process.env.SHOTS_DIR;
assert.ok(base && shots, "run me from go test -run Browser (CONSOLE_URL, SHOTS_DIR)");
const api = apiAt(apiBase);

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
// create writes a new file of alice's through the API, with extra body
// fields (expires, pinned).
const create = async (path, content, extra = {}) => {
  const r = await api("PUT", "namespaces/alice/files/" + path, "alice-key", { body: { content, ...extra }, headers: { "If-None-Match": "*" } });
  assert.equal(r.status, 201, `create ${path}: ${JSON.stringify(r.json)}`);
};
const file = async (path) => (await api("GET", "namespaces/alice/files/" + path, "alice-key")).json;

await finish(browser, async () => {
  // First, a file that expires while the other flows run.
  await create("main/boarding.md", "- gate 12, seat 14A\n", { expires: "1s" });
  await create("main/plans.md", "# Plans\n\n- learn Vietnamese\n");
  await create("main/sprint.md", "# Sprint\n\n- ship the console's lifetime form\n");

  const user = await newContext({ javaScriptEnabled: false });
  const page = await user.newPage();
  await signIn(page, "alice-key");

  await flow("pin and expire through the file page, JavaScript off", async () => {
    await page.goto(base + "/ns/alice/files/main/plans.md");
    assert.equal(await page.locator(".viewbar em.life").count(), 0, "no mark before");
    await page.check("form.lifetime input[name=pinned]");
    await page.click("form.lifetime button:text-is('Save lifetime')");
    await page.waitForSelector("p.flash:has-text('Pinned: it never expires.')");
    assert.equal(await page.locator(".viewbar em.life.pinned").innerText(), "pinned");
    let f = await file("main/plans.md");
    assert.ok(f.pinned && !f.expires_at && f.content === "# Plans\n\n- learn Vietnamese\n", JSON.stringify(f));

    await page.goto(base + "/ns/alice/files/main/sprint.md");
    const before = Date.now();
    await page.fill("form.lifetime input[name=expires]", "30d");
    await page.click("form.lifetime button:text-is('Save lifetime')");
    await page.waitForSelector("p.flash:has-text('It expires')");
    f = await file("main/sprint.md");
    const at = Date.parse(f.expires_at);
    assert.ok(!f.pinned && Math.abs(at - before - 30 * 864e5) < 60e3, `expires_at ${f.expires_at}: 30 days from now`);
    const mark = await page.locator(".viewbar em.life.expires").innerText();
    assert.equal(mark, "expires " + new Date(at).toISOString().slice(0, 16).replace("T", " ") + " UTC");

    // Pinned with the expiry still in its field: refused, saying what to do.
    await page.check("form.lifetime input[name=pinned]");
    await page.click("form.lifetime button:text-is('Save lifetime')");
    await page.waitForSelector("#lifetime p.error:has-text('a pinned file never expires: clear Expires to pin it')");
    assert.equal((await file("main/sprint.md")).version, f.version, "nothing written");
    await page.goto(base + "/ns/alice/files/main/sprint.md");
    await fits(page, "file", wide.width);
    await shot(page, "lifetime");

    // The notebook's listing and what the model sees.
    await page.goto(base + "/ns/alice/");
    const row = (name) => page.locator("table.files tbody tr", { has: page.locator(`a:text-is('${name}')`) });
    assert.equal(await row("main/plans.md").locator("em.life.pinned").innerText(), "pinned");
    assert.equal(await row("main/sprint.md").locator("em.life.expires").innerText(), mark);
    const seen = await page.innerText("pre.snapshot");
    assert.ok(seen.includes("plans.md (pinned)") && seen.includes("sprint.md (" + mark + ")"), "the model sees both marks:\n" + seen);
    assert.ok(seen.indexOf("plans.md (pinned)") < seen.indexOf("sprint.md"), "the pinned file first");
    assert.ok(await page.locator("#budget tr[data-part=files]").isVisible(), "what the model pays renders");
    await shot(page, "lifetime-notebook");

    // The editor's save keeps the pin.
    await page.goto(base + "/ns/alice/edit/main/plans.md");
    assert.match(await page.innerText("form.editor"), /pinned Saving keeps it/);
    await page.fill("textarea#content", "# Plans\n\n- learn Vietnamese\n- visit Hue\n");
    await page.click("button:text-is('Save')");
    await page.waitForSelector("text=Saved.");
    f = await file("main/plans.md");
    assert.ok(f.pinned && f.content.endsWith("- visit Hue\n"), "the save kept the pin: " + JSON.stringify(f));
  });

  await flow("an expired file's history and restore", async () => {
    for (let i = 0; (await api("GET", "namespaces/alice/files/main/boarding.md", "alice-key")).status !== 404; i++) {
      assert.ok(i < 50, "boarding.md did not expire");
      await new Promise((r) => setTimeout(r, 100));
    }
    await page.goto(base + "/ns/alice/");
    assert.equal(await page.locator("table.files a:text-is('main/boarding.md')").count(), 0, "gone from the notebook");
    await page.goto(base + "/ns/alice/history/main/boarding.md");
    const rows = page.locator("table.history tbody tr");
    assert.equal(await rows.count(), 2, "the write and its expiry");
    assert.match(await rows.nth(0).innerText(), /expired\s+agentmem-expiry/, "the expiry, by agentmem-expiry");
    assert.match(await rows.nth(1).locator(".kind").innerText(), /^write$/);
    await shot(page, "lifetime-history");
    await rows.nth(1).locator("a code.ver").click();
    await page.waitForSelector("text=the file is deleted now");
    await page.click("button:text-is('Restore this version')");
    await page.waitForSelector("p.flash:has-text('Restored version')");
    const f = await file("main/boarding.md");
    assert.ok(f.content === "- gate 12, seat 14A\n" && !f.expires_at, "restored, without its expiry: " + JSON.stringify(f));
  });

  await flow("lifetime on a phone", async () => {
    await page.setViewportSize(narrow);
    await page.goto(base + "/ns/alice/files/main/sprint.md");
    assert.ok(await page.locator("form.lifetime button").isVisible(), "the form on a phone");
    await fits(page, "file", narrow.width);
    await shot(page, "narrow-lifetime");
  });
  await user.close();
});
