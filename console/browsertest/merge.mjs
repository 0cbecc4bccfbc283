// The conflict view's three-way merge in the browser: flows that
// flows.mjs runs last, in its browser launch (so console's TestBrowserFlows
// and cmd/agentmem's TestBrowserServeSQLite and TestBrowserServePostgres,
// the real serve, run them). Each writes a file of its own under
// alice/main/merge-…, so it runs beside whatever the other flows left.
import assert from "node:assert/strict";
import path from "node:path";

const notes = (home, tea, work, extra = "") => `# Notes\n\n- lives in ${home}\n- likes ${tea}\n- works on ${work}\n${extra}`;
const MARK_YOURS = "<<<<<<< yours", MARK_SPLIT = "=======", MARK_THEIRS = ">>>>>>> theirs";

// mergeFlows runs the merge's flows with what flows.mjs shares: the
// console's base URL, its api(method, path, key, {body, headers}),
// newContext, flow, signIn, and the screenshots' folder.
export const mergeFlows = async ({ base, api, newContext, flow, signIn, shots }) => {
  const file = (rel) => "namespaces/alice/files/" + rel;
  const content = async (rel) => (await api("GET", file(rel), "alice-key")).json.content;
  // write puts text over the file's current version (or creates it), as
  // an agent does while the editor is open.
  const write = async (rel, text) => {
    const cur = await api("GET", file(rel), "alice-key");
    const put = await api("PUT", file(rel), "alice-key", { body: { content: text }, headers: cur.status === 200 ? { "If-Match": cur.etag } : { "If-None-Match": "*" } });
    assert.equal(put.status, cur.status === 200 ? 200 : 201, `write ${rel}: ${JSON.stringify(put.json)}`);
  };
  const shot = (page, name) => page.screenshot({ path: path.join(shots, `console-${name}.png`), fullPage: true });
  // conflictOn opens the editor of rel (written as baseText first), types
  // yours, lets theirs land through the API, saves, and returns the
  // response of the conflict view it gets.
  const conflictOn = async (page, rel, baseText, yours, theirs) => {
    await write(rel, baseText);
    await page.goto(base + "/ns/alice/edit/" + rel);
    await page.fill("textarea#content", yours);
    await write(rel, theirs);
    const [resp] = await Promise.all([page.waitForNavigation(), page.click("button:text-is('Save')")]);
    assert.equal(resp.status(), 409, "a conflict");
    await page.waitForSelector("h1:has-text('Conflict on')");
    return resp;
  };
  // inert fails unless the page has the strict CSP and runs nothing but
  // the console's own script.
  const inert = async (page, resp, what) => {
    assert.match(resp.headers()["content-security-policy"] || "", /script-src 'self'/, `${what}: the strict CSP`);
    const bad = await page.evaluate(() => ({
      scripts: [...document.scripts].filter((s) => !s.src.endsWith("/static/console.js")).length,
      handlers: [...document.querySelectorAll("*")].flatMap((el) => [...el.attributes].map((a) => a.name)).filter((n) => n.startsWith("on")).length,
      styles: document.querySelectorAll("style, [style]").length,
    }));
    assert.deepEqual(bad, { scripts: 0, handlers: 0, styles: 0 }, `${what}: inline script or style`);
  };

  const ctx = await newContext();
  const page = await ctx.newPage();
  await signIn(page, "admin-key");

  await flow("merge, edits apart", async () => {
    const rel = "main/merge-apart.md";
    const yours = notes("Hanoi", "tea", "agentmem and its console");
    const theirs = notes("Da Nang", "tea", "agentmem");
    const resp = await conflictOn(page, rel, notes("Hanoi", "tea", "agentmem"), yours, theirs);
    await inert(page, resp, "the merge view");
    const merged = notes("Da Nang", "tea", "agentmem and its console");
    assert.equal(await page.inputValue("textarea#merged"), merged, "both edits in the merge, ready to save");
    assert.match(await page.innerText("p.merged"), /do not overlap/);
    assert.equal(await page.locator(".overlap").count(), 0, "no overlap marked");
    assert.equal(await page.inputValue("textarea#content"), yours, "yours is still there whole");
    assert.equal(await content(rel), theirs, "nothing was overwritten");
    // A third writer lands before the merge is saved: saving it conflicts
    // again (the same If-Match path), and the new view merges all three.
    const third = theirs.replace("# Notes", "# Alice's notes");
    await write(rel, third);
    const [again] = await Promise.all([page.waitForNavigation(), page.click("button:text-is('Save the merge')")]);
    assert.equal(again.status(), 409, "the merge's save meets the third writer");
    assert.equal(await content(rel), third, "the third writer's text stands");
    const all = merged.replace("# Notes", "# Alice's notes");
    assert.equal(await page.inputValue("textarea#merged"), all, "merged again, with the third writer's edit");
    await page.click("button:text-is('Save the merge')");
    await page.waitForSelector("p.flash:has-text('Saved.')");
    assert.equal(await content(rel), all, "saved without loss");
    const hist = await api("GET", "namespaces/alice/history/" + rel, "alice-key");
    assert.equal(hist.json.entries.length, 4, "created, theirs, the third writer's, the merge");
    assert.equal(hist.json.entries[0].metadata.client, "console", "the merge saved by the console");
  });

  await flow("merge, overlapping edits show both sides", async () => {
    const rel = "main/merge-overlap.md";
    const theirs = notes("Da Nang", "tea", "agentmem");
    const resp = await conflictOn(page, rel, notes("Hanoi", "tea", "agentmem"), notes("Saigon", "tea", "agentmem", "- plays go\n"), theirs);
    await inert(page, resp, "the overlap view");
    const marked = `# Notes\n\n${MARK_YOURS}\n- lives in Saigon\n${MARK_SPLIT}\n- lives in Da Nang\n${MARK_THEIRS}\n- likes tea\n- works on agentmem\n- plays go\n`;
    assert.equal(await page.inputValue("textarea#merged"), marked, "the overlap marked, the edit apart kept");
    assert.match(await page.innerText("p.overlaps"), /^1 place where you both changed the same lines/);
    const o = page.locator("section.overlap");
    assert.equal(await o.count(), 1, "one overlap");
    assert.equal(await o.locator("pre.overlap-yours").innerText(), "- lives in Saigon\n", "yours");
    assert.equal(await o.locator("pre.overlap-theirs").innerText(), "- lives in Da Nang\n", "theirs");
    const [y, t] = [await o.locator("pre.overlap-yours").boundingBox(), await o.locator("pre.overlap-theirs").boundingBox()];
    assert.ok(Math.abs(y.y - t.y) <= 2 && y.x + y.width <= t.x, "yours and theirs side by side");
    await o.locator("summary").click();
    assert.equal(await o.locator("pre.overlap-base").innerText(), "- lives in Hanoi\n", "what it was, one click away");
    await shot(page, "merge-overlap");
    // Saved with the markers left in: refused, nothing written.
    const [refused] = await Promise.all([page.waitForNavigation(), page.click("button:text-is('Save the merge')")]);
    assert.equal(refused.status(), 422);
    assert.match(await page.innerText("p.error"), /1 place is still marked/);
    assert.equal(await content(rel), theirs, "nothing written");
    assert.equal(await page.inputValue("textarea#content"), marked, "the text kept in the editor");
    const resolved = notes("Da Nang (Saigon in the winter)", "tea", "agentmem", "- plays go\n");
    await page.fill("textarea#content", resolved);
    await page.click("button:text-is('Save')");
    await page.waitForSelector("p.flash:has-text('Saved.')");
    assert.equal(await content(rel), resolved, "the resolved merge saved");
  });

  await flow("merge, JavaScript off", async () => {
    const noJS = await newContext({ javaScriptEnabled: false });
    const p = await noJS.newPage();
    await signIn(p, "admin-key");
    const rel = "main/merge-nojs.md";
    await conflictOn(p, rel, "a\nb\nc\n", "a\nb\nc\nmine\n", "theirs\na\nb\nc\n");
    assert.equal(await p.inputValue("textarea#merged"), "theirs\na\nb\nc\nmine\n");
    await p.click("button:text-is('Save the merge')");
    await p.waitForSelector("p.flash:has-text('Saved.')");
    assert.equal(await content(rel), "theirs\na\nb\nc\nmine\n");
    await noJS.close();
  });

  await flow("merge on a narrow viewport", async () => {
    const narrow = { width: 390, height: 844 };
    const phone = await newContext({ viewport: narrow, isMobile: true, hasTouch: true });
    const p = await phone.newPage();
    await signIn(p, "admin-key");
    await conflictOn(p, "main/merge-narrow.md", notes("Hanoi", "tea", "agentmem"), notes("Saigon", "tea", "agentmem", "- plays go\n"), notes("Da Nang", "tea", "agentmem"));
    await p.locator("section.overlap summary").click();
    const m = await p.evaluate(() => ({ scroll: document.documentElement.scrollWidth, width: window.innerWidth }));
    assert.ok(m.scroll <= narrow.width && m.width === narrow.width, `the merge view is ${m.scroll} px wide (layout ${m.width} px) on a ${narrow.width} px screen`);
    const o = p.locator("section.overlap");
    const [y, t] = [await o.locator("pre.overlap-yours").boundingBox(), await o.locator("pre.overlap-theirs").boundingBox()];
    assert.ok(Math.abs(y.y - t.y) <= 2 && y.x + y.width <= t.x, "yours and theirs side by side on a phone too");
    await shot(p, "narrow-merge-overlap");
    await phone.close();
  });
  await ctx.close();
};
