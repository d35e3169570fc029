// A fixture for tests/unit/test_code_javascript.py: every kind JavaScript has.
import { thing } from "./thing.js";

export const API_URL = "https://example.invalid", RETRIES = 3;
const settings = { mode: "fast", run() { return 1; } };
let counter = 0;

export function handle(request, { verbose } = {}) {
  const local = 1;
  function inner() {
    return local;
  }
  return inner();
}

export const arrow = async (a, b) => {
  return a + b;
};

const expression = function named(x) {
  return x;
};

function* generate() {
  yield 1;
}

export class Widget extends Base {
  static create = (opts) => new Widget(opts);
  #secret = 1;
  count = 0;

  constructor(opts) {
    super(opts);
  }

  get size() {
    return this.count;
  }

  #hidden() {}
}

export default class {
  anonymous() {}
}

const Mixin = class {
  apply() {}
};
