// An answer on screen: Markdown rendered (raw HTML off), sanitized, citations as links, code
// blocks highlighted, each with a Copy button (the extension writes the clipboard).

import DOMPurify from "dompurify";
import { answerHtml } from "../src/answer_html";
import type { Reference } from "../src/protocol";
import { button, element } from "./dom";
import { send } from "./host";

const PURIFY = { ADD_ATTR: ["data-ref"], FORBID_TAGS: ["style", "img", "form", "input", "button"] };

function addCopyButtons(box: HTMLElement): void {
  for (const pre of Array.from(box.querySelectorAll("pre"))) {
    const code = pre.querySelector("code");
    const copy = button(
      "copy-code",
      "Copy",
      () => {
        send({ type: "copy", text: (code ?? pre).textContent ?? "" });
        copy.textContent = "Copied";
        window.setTimeout(() => (copy.textContent = "Copy"), 1500);
      },
      "Copy code",
    );
    pre.classList.add("code-block");
    pre.prepend(copy);
  }
}

/** `div.answer` (plus `extra` classes) for `markdown`, with the references' spans as links. */
export function answerElement(markdown: string, refs: readonly Reference[], extra = ""): HTMLElement {
  const box = element("div", `answer${extra ? ` ${extra}` : ""}`);
  box.innerHTML = DOMPurify.sanitize(answerHtml(markdown, refs), PURIFY);
  addCopyButtons(box);
  return box;
}
