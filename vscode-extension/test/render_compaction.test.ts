import assert from "node:assert/strict";
import { before, test } from "node:test";
import { renderCompactions } from "../media/render_compaction";
import type { Compaction } from "../src/protocol";

// Just enough of a DOM for the view's builders that make elements and set their text:
// createElement, append, textContent, attributes and className, serialized as HTML with
// text escaped. `innerHTML` cannot be set: a builder that tried would throw.

const escape = (text: string): string => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

class FakeText {
  constructor(readonly text: string) {}
  get html(): string {
    return escape(this.text);
  }
}

class FakeElement {
  readonly children: (FakeElement | FakeText)[] = [];
  readonly attributes = new Map<string, string>();
  readonly dataset: Record<string, string> = {};
  constructor(readonly tagName: string) {}
  set className(value: string) {
    this.attributes.set("class", value);
  }
  get className(): string {
    return this.attributes.get("class") ?? "";
  }
  set textContent(value: string) {
    this.children.splice(0, this.children.length, new FakeText(value));
  }
  get textContent(): string {
    return this.children.map((c) => (c instanceof FakeText ? c.text : c.textContent)).join("");
  }
  set innerHTML(_value: string) {
    throw new Error("innerHTML set: the view must add text as text");
  }
  setAttribute(name: string, value: string): void {
    this.attributes.set(name, value);
  }
  getAttribute(name: string): string | null {
    return this.attributes.get(name) ?? null;
  }
  append(...nodes: (FakeElement | string)[]): void {
    for (const node of nodes) this.children.push(typeof node === "string" ? new FakeText(node) : node);
  }
  /** Direct and nested children with this tag name, in document order. */
  all(tag: string): FakeElement[] {
    const found: FakeElement[] = [];
    for (const child of this.children) {
      if (!(child instanceof FakeElement)) continue;
      if (child.tagName === tag) found.push(child);
      found.push(...child.all(tag));
    }
    return found;
  }
  get outerHTML(): string {
    const attrs = [...this.attributes].map(([k, v]) => ` ${k}="${escape(v).replace(/"/g, "&quot;")}"`).join("");
    const inner = this.children.map((c) => (c instanceof FakeText ? c.html : c.outerHTML)).join("");
    return `<${this.tagName}${attrs}>${inner}</${this.tagName}>`;
  }
}

/** Make `document` the fake one for the code under test. */
function installFakeDocument(): void {
  (globalThis as { document?: unknown }).document = { createElement: (tag: string) => new FakeElement(tag) };
}

before(installFakeDocument);

const hostile = 'The handler is at src/app.py:10-12.\n<img src=x onerror="alert(1)"> <script>alert(2)</script> &amp;';

test("a summarized compaction is a divider that opens to the summary, which stays text", () => {
  const box = renderCompactions([{ how: "summarized", before: 12400, after: 900, turns: 2, outputs: 0, summary: hostile }]) as unknown as FakeElement;
  const [details] = box.all("details");
  assert.ok(details, box.outerHTML);
  const [head] = details.all("summary");
  assert.equal(head.textContent, "Earlier turns summarized (12,400 → 900 tokens)");
  const texts = details.all("p").map((p) => p.textContent);
  assert.deepEqual(texts, ["What the model keeps of 2 earlier questions, in its own words:", hostile.trim()]);
  // Markup in the summary is shown, not made: no element but the divider's own.
  assert.deepEqual(box.all("img"), []);
  assert.deepEqual(box.all("script"), []);
  assert.match(box.outerHTML, /&lt;img src=x onerror="alert\(1\)"&gt; &lt;script&gt;alert\(2\)&lt;\/script&gt; &amp;amp;/);
});

test("a shortened or dropped compaction is a plain line that says why; several are drawn in order", () => {
  const list: Compaction[] = [
    { how: "dropped", before: 7000, after: 4100, turns: 2, outputs: 1, why: "summarizing failed (<b>500</b>)" },
    { how: "summarized", before: 5000, after: 700, turns: 1, outputs: 0, summary: "s" },
  ];
  const box = renderCompactions(list) as unknown as FakeElement;
  const lines = box.children as FakeElement[];
  assert.deepEqual(lines.map((el) => el.tagName), ["p", "details"]);
  assert.equal(lines[0].textContent, "2 earlier turns dropped and 1 old tool output shortened to fit the context window (7,000 → 4,100 tokens): summarizing failed (<b>500</b>)");
  assert.deepEqual(box.all("b"), []);
  assert.equal(box.all("p")[1].textContent, "What the model keeps of 1 earlier question, in its own words:");
});

test("no compaction, no divider", () => {
  assert.equal(renderCompactions([]), undefined);
});
