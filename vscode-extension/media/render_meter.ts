// The context meter by the model chip: a bar of how full the model's context window is,
// its percent beside it, and the whole line (used of window, where the window came from,
// the last compaction) as its tooltip and accessible label. Warns in the theme's warning
// colour, and in words, from 80% on. Hidden until a request has been measured.

import type { Meter } from "../src/context_meter";
import type { Shell } from "./shell";

export function renderMeter(shell: Shell, meter: Meter | undefined): void {
  const box = shell.meter;
  box.hidden = !meter;
  if (!meter) return;
  box.classList.toggle("warn", meter.warn);
  box.title = meter.label;
  box.setAttribute("aria-label", meter.label);
  box.setAttribute("aria-valuenow", String(Math.min(100, meter.percent)));
  box.setAttribute("aria-valuetext", `${meter.percent}%`);
  shell.meterFill.style.width = `${(meter.fraction * 100).toFixed(1)}%`;
  shell.meterText.textContent = `${meter.percent}%`;
}
