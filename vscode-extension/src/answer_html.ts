// An answer's Markdown as HTML: raw HTML disabled, citations as links by their span, code
// blocks highlighted by highlight.js (the core and a few common languages only, so the
// webview bundle stays small). The view sanitizes the result before showing it. No DOM here.

import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import c from "highlight.js/lib/languages/c";
import cpp from "highlight.js/lib/languages/cpp";
import diff from "highlight.js/lib/languages/diff";
import go from "highlight.js/lib/languages/go";
import ini from "highlight.js/lib/languages/ini";
import java from "highlight.js/lib/languages/java";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import python from "highlight.js/lib/languages/python";
import rust from "highlight.js/lib/languages/rust";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";
import MarkdownIt from "markdown-it";
import { escapeHtml, expandCitations, markCitations } from "./citations";
import type { Reference } from "./protocol";

const LANGUAGES = { bash, c, cpp, diff, go, ini, java, javascript, json, python, rust, typescript, xml, yaml };
for (const [name, language] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, language);

/** Blocks without a language are guessed only up to this size, and kept plain below this confidence. */
const AUTO_MAX_CHARS = 5_000;
const AUTO_MIN_RELEVANCE = 5;

/** One code block as `<pre><code class="hljs language-x">`, highlighted when the language is known. */
export function highlightBlock(code: string, lang: string): string {
  const name = lang.trim().toLowerCase();
  let body: string | undefined;
  let shown = "";
  if (name && hljs.getLanguage(name)) {
    body = hljs.highlight(code, { language: name, ignoreIllegals: true }).value;
    shown = name;
  } else if (!name && code.length <= AUTO_MAX_CHARS) {
    const guess = hljs.highlightAuto(code);
    if (guess.language && guess.relevance >= AUTO_MIN_RELEVANCE) {
      body = guess.value;
      shown = guess.language;
    }
  }
  const language = /^[\w+#.-]{1,32}$/.test(shown || name) ? ` language-${shown || name}` : "";
  return `<pre><code class="hljs${language}">${body ?? escapeHtml(code)}</code></pre>\n`;
}

export function languageNames(): string[] {
  return hljs.listLanguages();
}

const markdown = new MarkdownIt({
  html: false,
  linkify: false,
  breaks: false,
  highlight: (code, lang) => highlightBlock(code, lang),
});
// Indented code blocks get the same treatment as fenced ones.
markdown.renderer.rules.code_block = (tokens, index) => highlightBlock(tokens[index].content, "");

/** The answer as HTML (to be sanitized), with its usable citations as links. */
export function answerHtml(answer: string, refs: readonly Reference[]): string {
  return expandCitations(markdown.render(markCitations(answer, refs)), answer, refs);
}
