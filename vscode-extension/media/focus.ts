// Where the keyboard focus goes when the view changes under it. A part drawn again puts
// the focus back on the same control in the new part; a control that went away (an
// approval answered, a queued question started) hands it to the question box. Nothing
// here takes the focus while the view does not have it: the editor keeps its cursor.

/** Everything that can hold the focus, by script or by Tab. */
export const FOCUSABLE = "a[href], button, textarea, input, select, summary, [tabindex]";

let questionBox: HTMLElement | undefined;

export function setQuestionBox(box: HTMLElement): void {
  questionBox = box;
}

/** The view has the focus (not the editor, not another part of the workbench). */
export function viewHasFocus(): boolean {
  return document.hasFocus();
}

/** Put the cursor in the question box, unless the focus is outside the view. */
export function focusQuestionBox(): void {
  if (questionBox && viewHasFocus()) questionBox.focus({ preventScroll: true });
}

function focusables(root: Element): Element[] {
  const inside = Array.from(root.querySelectorAll(FOCUSABLE));
  return root.matches(FOCUSABLE) ? [root, ...inside] : inside;
}

/** Which control of `part` has the focus (its place among the part's focusable
 * elements), or undefined when the focus is not in it. */
export function focusIn(part: Element): number | undefined {
  const active = document.activeElement;
  if (!active || !part.contains(active)) return undefined;
  return Math.max(0, focusables(part).indexOf(active));
}

/** After a part holding the focus at `at` was replaced by `fresh` (or removed): the same
 * control in the new part, the nearest one before it, else the question box. Nothing
 * while the view does not have the focus (a frame that focuses an element takes it). */
export function restoreFocus(fresh: Element | undefined, at: number): void {
  if (!viewHasFocus()) return;
  const targets = fresh ? focusables(fresh) : [];
  const target = targets[Math.min(at, targets.length - 1)];
  if (target instanceof HTMLElement) target.focus({ preventScroll: true });
  else focusQuestionBox();
}
