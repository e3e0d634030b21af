import { type Browser, chromium } from 'playwright-core';

/**
 * Debian's Chromium, headless, driven by playwright-core (never a downloaded browser; .ci/run
 * installs it). The flags keep it from reaching the network on its own.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    timeout: 60_000,
  });
}
