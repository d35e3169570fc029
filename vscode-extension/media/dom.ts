// Small DOM helpers: elements with a class and text, real buttons with labels, one Tab
// stop for a list.

export function element<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** A `<button type="button">` with its visible text; `label` when the text alone is not enough. */
export function button(className: string, text: string, onClick: (event: MouseEvent) => void, label?: string): HTMLButtonElement {
  const node = element("button", className, text);
  node.type = "button";
  if (label) {
    node.setAttribute("aria-label", label);
    node.title = label;
  }
  node.addEventListener("click", onClick);
  return node;
}

/** One Tab stop for a list of `items`: the last one focused takes Tab (the first at the
 * start); the arrow keys, Home and End move between them. */
export function rovingFocus(container: HTMLElement, items: readonly HTMLElement[]): void {
  items.forEach((item, index) => (item.tabIndex = index === 0 ? 0 : -1));
  container.addEventListener("focusin", (event) => {
    if (!items.includes(event.target as HTMLElement)) return;
    for (const item of items) item.tabIndex = item === event.target ? 0 : -1;
  });
  container.addEventListener("keydown", (event) => {
    const at = items.indexOf(event.target as HTMLElement);
    if (at < 0) return;
    const last = items.length - 1;
    const moves: Record<string, number> = { ArrowDown: at + 1, ArrowRight: at + 1, ArrowUp: at - 1, ArrowLeft: at - 1, Home: 0, End: last };
    const to = moves[event.key];
    if (to === undefined) return;
    event.preventDefault();
    items[Math.min(Math.max(to, 0), last)].focus();
  });
}
