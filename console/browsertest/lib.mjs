// What the browser test scripts share: the browser they launch, and how
// they end.
import { chromium } from "playwright-core";

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
