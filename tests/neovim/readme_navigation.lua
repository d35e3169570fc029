-- Loads tests/neovim/lantern.lua (the README's configuration) in a real Neovim, with a
-- real language server beside it when LANTERN_TEST_PYRIGHT names `pyright-langserver`,
-- and asks a question the model answers with find_references: Lantern asks Neovim
-- (`lantern/navigate`), which asks pyright. Observations go to LANTERN_TEST_OUT as JSON;
-- the tool result the model got is read from the fake model's requests by the Python test.

local env = vim.env
local out = { notifications = {}, prompts = {} }
local harness = dofile(vim.fs.dirname(arg[0]) .. '/harness.lua')
local wait = harness.wait
-- pyright's start and first analysis, on a busy machine: a bound on a hang, not a goal.
local SERVER_MS = tonumber(env.LANTERN_TEST_SERVER_MS) or 180000

vim.notify = function(message, level)
  table.insert(out.notifications, { message = message, level = level })
end
vim.ui.select = function(_, opts, on_choice)
  table.insert(out.prompts, opts.prompt)
  on_choice(nil) -- approvals are off in this test's settings: nothing should ask
end

local function client_named(name)
  local found
  if not vim.wait(SERVER_MS, function()
    found = vim.lsp.get_clients({ name = name, bufnr = 0 })[1]
    return found ~= nil and found.initialized
  end, 50) then
    error('timed out waiting for ' .. name .. ' to start')
  end
  return found
end

-- Waits until pyright has analysed the project: its own references of `a.run` (line 5 of
-- main.py) name a file. The question is asked only then, so Lantern's bounded wait meets
-- a server that is ready, as it would in an editor that has been open a while.
local function warm_up(pyright)
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(0) },
    position = { line = 4, character = 2 },
    context = { includeDeclaration = true },
  }
  if not vim.wait(SERVER_MS, function()
    local reply = pyright:request_sync('textDocument/references', params, 10000, 0)
    return reply ~= nil and reply.result ~= nil and #reply.result > 0
  end, 200) then
    error('timed out waiting for pyright to find references')
  end
end

-- Each op straight through the configuration's handler, run as Neovim runs it (in a
-- coroutine), from a position given as Lantern gives it (UTF-8 columns).
local function navigate_each(lantern, root)
  local handler = lantern.handlers['lantern/navigate']
  local main = vim.uri_from_fname(root .. '/main.py')
  local asked = {
    definition = { line = 4, character = 2 }, -- a.run()
    references = { line = 8, character = 18 }, -- größeÄÖÜ = a.run(): 13 characters before `run`
    implementation = { line = 4, character = 2 },
    typeDefinition = { line = 4, character = 0 }, -- a
    hover = { line = 4, character = 2 },
  }
  local answers = {}
  for op, position in pairs(asked) do
    local params = { op = op, uri = main, position = position }
    coroutine.wrap(function()
      answers[op] = handler(nil, params, { method = 'lantern/navigate', client_id = lantern.id })
    end)()
  end
  coroutine.wrap(function()
    answers.workspaceSymbols = handler(nil, { op = 'workspaceSymbols', query = 'run' }, {})
  end)()
  wait('every op answered', function()
    return vim.tbl_count(answers) == 6
  end)
  return answers
end

local function run()
  vim.cmd('filetype on')
  dofile(env.LANTERN_TEST_CONFIG)
  local with_pyright = (env.LANTERN_TEST_PYRIGHT or '') ~= ''
  if with_pyright then
    vim.lsp.config('pyright', {
      cmd = { env.LANTERN_TEST_PYRIGHT, '--stdio' },
      filetypes = { 'python' },
      root_markers = { '.git' },
    })
    vim.lsp.enable('pyright')
  end
  local root = env.LANTERN_TEST_WORKSPACE
  vim.cmd.edit(vim.fn.fnameescape(root .. '/main.py'))
  local lantern = client_named('lantern')
  out.navigation = lantern.capabilities.experimental.lantern.navigation
  local pyright = with_pyright and client_named('pyright') or nil
  if pyright then
    warm_up(pyright)
  end
  out.ops = navigate_each(lantern, root)
  vim.cmd('LanternAsk Where is A.run called?')
  wait('the answer buffer', function()
    return vim.api.nvim_buf_get_name(0):match('^lantern://answer/') ~= nil
  end)
  out.answer = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  -- The definition's file was not open: answering, the configuration loaded it.
  out.shapes_loaded = vim.api.nvim_buf_is_loaded(vim.fn.bufnr(root .. '/shapes.py'))
  harness.stop(lantern)
  if pyright then
    harness.stop(pyright)
  end
end

harness.finish(run, out)
