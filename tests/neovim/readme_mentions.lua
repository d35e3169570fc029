-- Loads tests/neovim/lantern.lua (the README's configuration) in a real Neovim and asks
-- with an `@path:START-END` mention from the workspace folder: the mentioned lines go
-- with the question, and nothing is prompted. Observations go to LANTERN_TEST_OUT as JSON.

local env = vim.env
local out = { notifications = {}, prompts = {} }
local harness = dofile(vim.fs.dirname(arg[0]) .. '/harness.lua')
local wait = harness.wait

vim.notify = function(message, level)
  table.insert(out.notifications, { message = message, level = level })
end
vim.ui.select = function(_, opts, on_choice)
  table.insert(out.prompts, opts.prompt)
  on_choice(nil) -- anything asked is denied: a mention needs no prompt
end

local function run()
  vim.cmd('filetype on')
  dofile(env.LANTERN_TEST_CONFIG)
  local root = env.LANTERN_TEST_WORKSPACE
  vim.cmd.cd(vim.fn.fnameescape(root))
  vim.cmd.edit(vim.fn.fnameescape(root .. '/README.md'))
  local client
  wait('vim.lsp.enable to start lantern', function()
    client = vim.lsp.get_clients({ name = 'lantern', bufnr = 0 })[1]
    return client ~= nil and client.initialized
  end)
  vim.cmd('LanternAsk what is in @src/text.py:2-2 ?')
  wait('the answer buffer', function()
    return vim.api.nvim_buf_get_name(0):match('^lantern://answer/') ~= nil
  end)
  out.answer = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  harness.stop(client)
end

harness.finish(run, out)
