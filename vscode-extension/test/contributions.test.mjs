// What package.json contributes is wired up: each keybinding runs a contributed command
// that src/commands.ts registers, only where it makes sense (a `when` clause).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf-8'));
const registered = fs.readFileSync(path.join(ROOT, 'src', 'commands.ts'), 'utf-8');

test('every default keybinding runs a contributed, registered command, with a when clause', () => {
  const contributed = new Set(pkg.contributes.commands.map((c) => c.command));
  const bindings = pkg.contributes.keybindings;
  assert.deepEqual(
    bindings.map((b) => [b.command, b.key]),
    [
      ['lantern.focusQuestion', 'ctrl+alt+k'],
      ['lantern.askSelection', 'ctrl+shift+alt+k'],
    ],
  );
  for (const binding of bindings) {
    assert.ok(contributed.has(binding.command), `${binding.command} is not in contributes.commands`);
    assert.ok(registered.includes(`"${binding.command}":`), `${binding.command} is not registered in src/commands.ts`);
    assert.ok(binding.when, `${binding.command} has no when clause`);
  }
});

test('Ask About Selection is bound only in an editor with a selection', () => {
  const ask = pkg.contributes.keybindings.find((b) => b.command === 'lantern.askSelection');
  assert.equal(ask.when, 'editorTextFocus && editorHasSelection');
});
