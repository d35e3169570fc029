-- Lantern in Neovim 0.11+: the configuration shown in the README, loaded as it is by
-- tests/neovim/test_neovim.py. Put it in your init.lua (or `:source` it).
--
--   :LanternAsk where is the config loaded?      ask about the workspace
--   :'<,'>LanternAsk what does this do?          send the selected lines with it
--   :LanternAsk what calls @src/app.py:10-20?     read those lines with it, unasked
-- Each question carries the file, the lines on screen, the selection and the
-- file's problems (vim.diagnostic.get) as its `context`.
--
-- The answer opens in a scratch buffer; its verified references go to the quickfix
-- list. Read prompts come up through vim.ui.select (Allow / Deny / …).

vim.lsp.config('lantern', {
  cmd = { 'lantern', 'serve' },
  root_markers = { '.git', '.lanternignore' }, -- the workspace folder Lantern may read
  -- Settings go in `settings.lantern` or `init_options`, e.g.
  -- init_options = { model = 'qwen2.5-coder', baseUrl = 'http://localhost:11434/v1' },
  handlers = {
    -- Tool activity while a question runs.
    ['lantern/event'] = function(_, event)
      if event.kind == 'tool' and event.status ~= 'running' then
        vim.notify(('Lantern: %s %s'):format(event.name, event.status), vim.log.levels.INFO)
      end
    end,
  },
})
vim.lsp.enable('lantern')

local function show(client, result)
  if result.stopReason == 'error' then
    -- errorCode is stable (`no_workspace`, `no_model`, `model_auth`, …); error is for people.
    vim.notify(('Lantern (%s): %s'):format(result.errorCode or 'error', result.error or ''), vim.log.levels.ERROR)
    return
  end
  vim.cmd('botright new')
  local buf = vim.api.nvim_get_current_buf()
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].filetype = 'markdown'
  vim.api.nvim_buf_set_name(buf, 'lantern://answer/' .. buf)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(result.answer, '\n'))
  -- Only verified references have `uri` and `range`: they go to the quickfix list as they are.
  local verified = vim.tbl_filter(function(ref)
    return ref.uri ~= nil
  end, result.references)
  local items = vim.lsp.util.locations_to_items(verified, client.offset_encoding)
  vim.fn.setqflist({}, ' ', { title = 'Lantern references', items = items })
end

-- What the editor shows goes with the question (docs/protocol.md, `context`): the file,
-- the lines on screen, the selection (with a range) and the file's problems. Lantern
-- reads the selected lines itself, asking like any read; the rest is metadata.
local function editor_context(opts)
  local name = vim.api.nvim_buf_get_name(0)
  if name == '' or vim.bo.buftype ~= '' then
    return nil -- no file on disk: nothing to attach
  end
  local function lines(first, last) -- 1-based, inclusive
    return { start = { line = first - 1, character = 0 }, ['end'] = { line = last, character = 0 } }
  end
  local problems = {}
  for _, d in ipairs(vim.diagnostic.get(0)) do
    if #problems == 50 then
      break
    end
    local last = d.end_lnum or d.lnum
    table.insert(problems, {
      range = { start = { line = d.lnum, character = d.col }, ['end'] = { line = last, character = d.end_col or d.col } },
      message = d.message,
      severity = d.severity,
      source = d.source,
    })
  end
  return {
    uri = vim.uri_from_fname(name),
    visibleRange = lines(vim.fn.line('w0'), vim.fn.line('w$')),
    range = opts.range > 0 and lines(opts.line1, opts.line2) or nil,
    diagnostics = #problems > 0 and problems or nil, -- an empty table would be a JSON object
  }
end

-- `@path` or `@path:START-END` in a question names a file (relative to Neovim's current
-- folder) to read with it, or a folder to list: your choice, so Lantern reads it without
-- asking, through the same read path as any read (docs/protocol.md, `mentions`).
local function mentions(question)
  local found = {}
  for word in question:gmatch('@(%S+)') do
    local path, first, last = word:match('^(.-):(%d+)%-?(%d*)$')
    local entry = { uri = vim.uri_from_fname(vim.fn.fnamemodify(path or word, ':p')) }
    if first then
      local stop = tonumber(last) or tonumber(first)
      entry.range = { start = { line = first - 1, character = 0 }, ['end'] = { line = stop, character = 0 } }
    end
    table.insert(found, entry)
  end
  return #found > 0 and found or nil -- an empty table would be a JSON object
end

vim.api.nvim_create_user_command('LanternAsk', function(opts)
  local client = vim.lsp.get_clients({ name = 'lantern', bufnr = 0 })[1]
  if not client then
    vim.notify('Lantern is not running for this buffer', vim.log.levels.WARN)
    return
  end
  local params = { question = opts.args, context = editor_context(opts), mentions = mentions(opts.args) }
  client:request('lantern/ask', params, function(err, result)
    if err then
      vim.notify('Lantern: ' .. err.message, vim.log.levels.ERROR) -- e.g. cancelled
      return
    end
    show(client, result)
  end, 0)
end, { nargs = '+', range = true, desc = 'Ask Lantern about this workspace' })
