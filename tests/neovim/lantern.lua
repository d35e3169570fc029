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
-- list. Read prompts come up through vim.ui.select (Allow / Deny / …). Lantern's
-- find_references asks your other language servers (pyright, tsserver, …), so `A.run`
-- means A's `run` and not every `run`.

-- `lantern/navigate` (docs/protocol.md, Navigation): Lantern asks what the other language
-- servers on a file know. Each op is one request to each of them; the first reply with
-- something in it is the answer. None within NAVIGATE_MS is null: Lantern then looks by
-- syntax alone, and says so. Columns on Lantern's side are UTF-8 bytes (what Neovim and
-- Lantern agree on); each server gets and gives them in its own encoding.
local NAVIGATE_MS = 4000 -- Lantern waits 5 s
local NAVIGATE = {
  definition = 'textDocument/definition',
  references = 'textDocument/references',
  implementation = 'textDocument/implementation',
  typeDefinition = 'textDocument/typeDefinition',
  hover = 'textDocument/hover',
  workspaceSymbols = 'workspace/symbol',
}

local function language_servers(filter) -- the running ones, Lantern left out
  return vim.tbl_filter(function(client)
    return client.name ~= 'lantern' and client.initialized
  end, vim.lsp.get_clients(filter))
end

-- Sends `method` to each server (with `params(server)`) and waits for every reply, or
-- NAVIGATE_MS. Neovim runs the handler of a server's request in a coroutine, so this
-- yields rather than blocking the editor. Returns one { server, result } per server, in order.
local function ask(servers, method, params, buf)
  local co, replies, left = coroutine.running(), {}, #servers
  local function wake()
    local waiting = co
    co = nil
    if waiting then
      coroutine.resume(waiting)
    end
  end
  for i, server in ipairs(servers) do
    replies[i] = { server = server }
    local sent = server:request(method, params(server), function(err, result)
      replies[i].result = (not err) and result or nil
      left = left - 1
      if left == 0 then
        wake()
      end
    end, buf)
    if not sent then -- the server stopped meanwhile
      left = left - 1
    end
  end
  if left > 0 then
    vim.defer_fn(wake, NAVIGATE_MS)
    coroutine.yield()
  end
  return replies
end

-- Locations (or links) the way the wire has them, each with the one it came from.
local function located(found, server)
  local list = vim.islist(found) and found or { found }
  local items = vim.lsp.util.locations_to_items(list, server.offset_encoding)
  return vim.tbl_map(function(item) -- item.col: a 1-based byte column, read from the file
    local start = { line = item.lnum - 1, character = item.col - 1 }
    local stop = { line = item.end_lnum - 1, character = item.end_col - 1 }
    local uri = item.user_data.uri or item.user_data.targetUri
    local range = { start = start, ['end'] = stop }
    return { from = item.user_data, wire = { uri = uri, range = range } }
  end, items)
end

local function symbols_of(found, server) -- workspace/symbol's answer; no range: left out
  local owner = {}
  for _, symbol in ipairs(found) do
    if symbol.location and symbol.location.range then
      owner[symbol.location] = symbol
    end
  end
  return vim.tbl_map(function(place)
    local symbol = owner[place.from]
    local kind = vim.lsp.protocol.SymbolKind[symbol.kind] -- 'Class' on the wire is 'class'
    kind = kind and kind:sub(1, 1):lower() .. kind:sub(2)
    local container = symbol.containerName
    return { name = symbol.name, kind = kind, containerName = container, location = place.wire }
  end, located(vim.tbl_keys(owner), server))
end

-- What one reply says, in the wire's shape; nil when it says nothing.
local function answer(op, reply)
  local found, source = reply.result, reply.server.name
  if found == nil then
    return nil
  elseif op == 'hover' then
    local text = table.concat(vim.lsp.util.convert_input_to_markdown_lines(found.contents), '\n')
    return vim.trim(text) ~= '' and { source = source, hover = text } or nil
  elseif op == 'workspaceSymbols' then
    local symbols = symbols_of(found, reply.server)
    return #symbols > 0 and { source = source, symbols = symbols } or nil
  end
  local locations = vim.tbl_map(function(place)
    return place.wire
  end, located(found, reply.server))
  return #locations > 0 and { source = source, locations = locations } or nil
end

local function navigate(_, params)
  local method, replies = NAVIGATE[params.op], {}
  if params.op == 'workspaceSymbols' then
    replies = ask(language_servers({ method = method }), method, function()
      return { query = params.query or '' }
    end)
  elseif method and type(params.uri) == 'string' and params.uri:match('^file:') then
    local buf = vim.fn.bufadd(vim.uri_to_fname(params.uri))
    vim.fn.bufload(buf) -- a file that is not open: the servers for its type attach
    local at = params.position
    local line = vim.api.nvim_buf_get_lines(buf, at.line, at.line + 1, false)[1] or ''
    replies = ask(language_servers({ bufnr = buf, method = method }), method, function(server)
      local character = vim.str_utfindex(line, server.offset_encoding, at.character, false)
      return {
        textDocument = { uri = params.uri },
        position = { line = at.line, character = character },
        context = { includeDeclaration = true }, -- for references
      }
    end, buf)
  end
  for _, reply in ipairs(replies) do
    local found = answer(params.op, reply)
    if found then
      return found
    end
  end
  return vim.NIL -- null: nobody knew
end

vim.lsp.config('lantern', {
  cmd = { 'lantern', 'serve' },
  root_markers = { '.git', '.lanternignore' }, -- the workspace folder Lantern may read
  -- Settings go in `settings.lantern` or `init_options`, e.g.
  -- init_options = { model = 'qwen2.5-coder', baseUrl = 'http://localhost:11434/v1' },
  capabilities = { experimental = { lantern = { navigation = vim.tbl_keys(NAVIGATE) } } },
  handlers = {
    ['lantern/navigate'] = navigate,
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
