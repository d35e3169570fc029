// Small DOM helpers: elements with a class and text, real buttons with labels.

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
