-- Loads tests/neovim/lantern.lua (the README's configuration) in a real Neovim and
-- uses it as a user would: open a file, `:1,2LanternAsk …`, read the answer buffer
-- and the quickfix list. Observations go to LANTERN_TEST_OUT as JSON.

local env = vim.env
local out = { notifications = {} }
local harness = dofile(vim.fs.dirname(arg[0]) .. '/harness.lua')
local wait = harness.wait

vim.notify = function(message, level)
  table.insert(out.notifications, { message = message, level = level })
end

-- The read of the selection asks like any read: allow it, and say what was asked.
out.prompts = {}
vim.ui.select = function(items, opts, on_choice)
  table.insert(out.prompts, opts.prompt)
  for _, item in ipairs(items) do
    if item.title == 'Allow' then
      return on_choice(item)
    end
  end
  on_choice(nil)
end

local function run()
  vim.cmd('filetype on')
  dofile(env.LANTERN_TEST_CONFIG)
  local root = env.LANTERN_TEST_WORKSPACE
  vim.cmd.edit(vim.fn.fnameescape(root .. '/src/text.py'))
  local client
  wait('vim.lsp.enable to start lantern', function()
    client = vim.lsp.get_clients({ name = 'lantern', bufnr = 0 })[1]
    return client ~= nil and client.initialized
  end)
  out.root_dir = client.root_dir
  local ns = vim.api.nvim_create_namespace('readme_test')
  vim.diagnostic.set(ns, 0, { { lnum = 1, col = 4, message = 'greeting is unused', severity = 2, source = 'lint' } })
  vim.cmd('1,2LanternAsk what does this do?')
  wait('the quickfix list', function()
    return vim.fn.getqflist({ title = 0 }).title == 'Lantern references'
  end)
  out.answer = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  out.quickfix = harness.quickfix(vim.fn.getqflist())
  harness.stop(client)
end

harness.finish(run, out)
