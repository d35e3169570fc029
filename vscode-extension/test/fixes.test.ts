import assert from "node:assert/strict";
import { test } from "node:test";
import { editorWords, failureView, fixLine, settingId, stopText, type FixView } from "../src/fixes";
import type { Detail } from "../src/protocol";

const wrongUrl: Detail = {
  code: "model_wrong_url",
  message:
    "nothing answers chat requests at http://localhost:11434 (404), but the API answers at http://localhost:11434/v1: 404 page not found; set `baseUrl` to http://localhost:11434/v1 (the API answers there)",
  summary: "nothing answers chat requests at http://localhost:11434 (404), but the API answers at http://localhost:11434/v1",
  status: 404,
  providerMessage: "404 page not found",
  fixes: [{ setting: "baseUrl", value: "http://localhost:11434/v1", note: "the API answers there" }],
};

const models = ["qwen2.5-coder:7b", "llama3.1:8b", "mistral", "phi3", "gemma2", "codellama", "deepseek-coder", "starcoder2", "granite-code", "qwen2.5:14b"];
const noModel: Detail = {
  code: "no_model",
  message: `no model is set: set \`model\` to one your endpoint offers; the endpoint has: ${models.join(", ")}`,
  summary: "no model is set: set `model` to one your endpoint offers",
  fixes: [{ setting: "model", choices: models }],
};

const auth: Detail = {
  code: "model_auth",
  message: "the endpoint refused the API key (401): Incorrect API key provided",
  summary: "the endpoint refused the API key (401)",
  status: 401,
  providerMessage: "Incorrect API key provided: sk-…abcd",
  fixes: [{ setting: "apiKey" }],
};

const contextLength: Detail = {
  code: "model_context_length",
  message: "the conversation is longer than the model's context window",
  summary: "the conversation is longer than the model's context window",
  status: 400,
  fixes: [
    { note: "raise Ollama's context window: start it with OLLAMA_CONTEXT_LENGTH=16384 (or set num_ctx in the model's Modelfile)" },
    { setting: "maxContextTokens", note: "lower it, or start a new conversation, to send less" },
  ],
};

const timeoutDetail: Detail = {
  code: "model_timeout",
  message: "the model server did not answer in 120 s",
  summary: "the model server did not answer in 120 s",
  fixes: [{ setting: "requestTimeoutSeconds", note: "a slow or busy server may need more" }],
};

const truncated: Detail = {
  code: "truncated",
  message: "the answer was cut off: the model reached its output limit (finish_reason length); what arrived is shown",
  summary: "the answer was cut off: the model reached its output limit (finish_reason length); what arrived is shown",
  fixes: [{ setting: "maxOutputTokens", value: 8192, note: "it is 4,096 now" }],
};

const labels = (view: FixView): string[] => view.buttons.map((b) => b.label);

/** Everything the card shows, as one text. */
const shown = (view: FixView): string => [view.summary, ...view.lines, ...view.buttons.map((b) => `${b.label} ${b.setting ?? ""}`)].join("\n");

test("a wrong base URL says what to set it to and opens that setting; Retry retries this turn", () => {
  const view = failureView({ key: "t1", detail: wrongUrl, retry: true });
  assert.equal(view.summary, wrongUrl.summary);
  assert.equal(view.providerMessage, "404 page not found");
  assert.deepEqual(view.lines, ["Set lantern.baseUrl to http://localhost:11434/v1: the API answers there"]);
  assert.deepEqual(labels(view), ["Open Setting", "Retry"]);
  assert.deepEqual(view.buttons[0].action, { action: "openSetting", setting: "lantern.baseUrl" });
  assert.equal(view.buttons[0].setting, "lantern.baseUrl");
  assert.deepEqual(view.buttons[1].action, { action: "retry", key: "t1" });
});

test("no model: Connect a Model and Pick Model, the endpoint's models listed (long lists shortened)", () => {
  const view = failureView({ key: "t2", detail: noModel, retry: true });
  assert.deepEqual(labels(view), ["Connect a Model", "Pick Model", "Retry"]);
  assert.deepEqual(view.buttons[0].action, { action: "connect" });
  assert.deepEqual(view.buttons[1].action, { action: "pickModel" });
  assert.equal(view.summary, "no model is set: set lantern.model to one your endpoint offers");
  assert.equal(view.lines.length, 1);
  assert.match(view.lines[0], /^Set lantern\.model to one of the endpoint's models: qwen2\.5-coder:7b, llama3\.1:8b, .* and 2 more$/);
  assert.ok(!view.lines[0].includes("qwen2.5:14b"));
});

test("a refused key offers Set API Key, in words, and shows the provider's message", () => {
  const view = failureView({ key: "t3", detail: auth, retry: true });
  assert.deepEqual(labels(view), ["Set API Key", "Retry"]);
  assert.deepEqual(view.buttons[0].action, { action: "setApiKey" });
  assert.deepEqual(view.lines, ["Set the API key (Lantern: Set API Key)"]);
  assert.equal(view.providerMessage, "Incorrect API key provided: sk-…abcd");
});

test("a server-side fix is a line without a button; a setting fix opens that setting", () => {
  const view = failureView({ key: "t4", detail: contextLength, retry: true });
  assert.deepEqual(view.lines, [
    "raise Ollama's context window: start it with OLLAMA_CONTEXT_LENGTH=16384 (or set num_ctx in the model's Modelfile)",
    "Check lantern.maxContextTokens: lower it, or start a new conversation, to send less",
  ]);
  assert.deepEqual(labels(view), ["Open Setting", "Retry"]);
  assert.equal(view.buttons[0].setting, "lantern.maxContextTokens");
  const timeout = failureView({ key: "t5", detail: timeoutDetail, retry: true });
  assert.deepEqual(timeout.lines, ["Check lantern.requestTimeoutSeconds: a slow or busy server may need more"]);
  assert.equal(timeout.buttons[0].setting, "lantern.requestTimeoutSeconds");
});

test("each button once, however many fixes name the same setting", () => {
  const detail: Detail = { ...noModel, fixes: [{ setting: "model", note: "a smaller model" }, { setting: "model", choices: ["a", "b"] }, { setting: "baseUrl" }, { setting: "baseUrl", note: "x" }] };
  assert.deepEqual(labels(failureView({ key: "k", detail, retry: true })), ["Connect a Model", "Pick Model", "Open Setting", "Retry"]);
});

test("a cancel or a stop offers no Retry", () => {
  assert.deepEqual(labels(failureView({ key: "k", message: "Stopped.", retry: false })), []);
  assert.deepEqual(labels(failureView({ key: "k", detail: truncated, retry: false })), ["Open Setting"]);
});

test("an older server's text with command-line flags is shown with setting names instead", () => {
  const view = failureView({
    key: "k",
    code: "no_model",
    message:
      "no model is set; name one with --model, LANTERN_MODEL or `model` in config.toml. Others (vLLM, llama.cpp): --base-url URL --model NAME [--api-key KEY]",
    retry: true,
  });
  assert.ok(!view.summary.includes("--"), view.summary);
  assert.match(view.summary, /name one with lantern\.model/);
  assert.match(view.summary, /lantern\.baseUrl lantern\.model \[the API key \(Lantern: Set API Key\)\]/);
  assert.deepEqual(labels(view), ["Connect a Model", "Pick Model", "Retry"]);
  assert.deepEqual(labels(failureView({ key: "k", code: "model_auth", message: "bad key", retry: true })), ["Set API Key", "Retry"]);
});

test("no Lantern command-line flag in any card, line or button", () => {
  for (const detail of [wrongUrl, noModel, auth, contextLength, timeoutDetail, truncated]) {
    const text = shown(failureView({ key: "k", detail, retry: true }));
    assert.doesNotMatch(text, /(^|\s)--?[a-z]/m, text);
    assert.doesNotMatch(text, /lantern (ask|serve|doctor)/);
  }
});

test("setting names and single fixes", () => {
  assert.equal(settingId("baseUrl"), "lantern.baseUrl");
  assert.equal(settingId("lantern.model"), "lantern.model");
  assert.equal(editorWords("set `maxOutputTokens` or `apiKey`"), "set lantern.maxOutputTokens or the API key (Lantern: Set API Key)");
  assert.equal(editorWords("set `unknownThing`"), "set `unknownThing`");
  assert.equal(fixLine({ setting: "model" }), "Set lantern.model to a model your endpoint offers");
  assert.equal(fixLine({ setting: "toolProtocol", value: "auto", note: "Lantern's text tool protocol" }), "Set lantern.toolProtocol to auto: Lantern's text tool protocol");
  assert.equal(fixLine({ setting: "headers" }), "Check lantern.headers");
  assert.equal(fixLine({}), undefined);
  assert.equal(fixLine({ note: "  " }), undefined);
});

test("stop lines: filtered and truncated say what the server said; the rest name their setting", () => {
  assert.equal(stopText({ stopReason: "truncated", detail: truncated }), `Stopped: ${truncated.summary}`);
  assert.equal(stopText({ stopReason: "truncated" }), "Stopped: the answer reached the model's output limit.");
  assert.match(stopText({ stopReason: "max_steps" }), /lantern\.maxSteps/);
  assert.equal(stopText({ stopReason: "cancelled" }), "Cancelled.");
});

test("the prompt-cut warning shows its fixes in the editor's words, with no flag and no Retry", () => {
  const warning: Detail = {
    code: "prompt_truncated",
    message: "the endpoint counted 900 prompt tokens, but Lantern sent about 4,000: the server cut the conversation",
    summary: "the endpoint counted 900 prompt tokens, but Lantern sent about 4,000: the server cut the conversation",
    fixes: [
      { note: "raise Ollama's context window: start it with OLLAMA_CONTEXT_LENGTH=16384" },
      { setting: "maxContextTokens", note: "set it to the window the server really runs with (was --max-context-tokens)" },
    ],
  };
  const view = failureView({ key: "k", detail: warning, retry: false });
  assert.equal(view.summary, warning.summary);
  assert.deepEqual(view.lines, [
    "raise Ollama's context window: start it with OLLAMA_CONTEXT_LENGTH=16384",
    "Check lantern.maxContextTokens: set it to the window the server really runs with (was lantern.maxContextTokens)",
  ]);
  assert.deepEqual(
    view.buttons.map((b) => [b.label, b.setting]),
    [["Open Setting", "lantern.maxContextTokens"]],
  );
  assert.doesNotMatch(JSON.stringify(view), /--max-context-tokens/);
});
