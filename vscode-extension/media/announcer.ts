// The one polite live region. Each text is said once; the region is emptied first so the
// same words twice are still read.

let pending: string[] = [];
let scheduled = false;

export function announce(region: HTMLElement, texts: readonly string[]): void {
  if (texts.length === 0) return;
  pending.push(...texts);
  if (scheduled) return;
  scheduled = true;
  region.textContent = "";
  window.setTimeout(() => {
    region.textContent = pending.join(" ");
    pending = [];
    scheduled = false;
  }, 100);
}
