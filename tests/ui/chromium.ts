// Debian's Chromium for the browser tests, through playwright-core: headless, with nothing of its own on the network.
import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";
export const available = existsSync(CHROMIUM);
// Under CI the browser tests must run: a missing Chromium fails them loudly (.ci/run installs Debian's package).
if (!available && process.env.CI) throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (.ci/run does)`);
if (!available) console.warn(`SKIPPED: the browser tests need ${CHROMIUM} (apt-get install -y chromium)`);

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}
