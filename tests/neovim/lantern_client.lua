-- A real Neovim (0.11+) driving `lantern serve` the way a user's config would:
-- vim.lsp.start, the built-in window/showMessageRequest handler answered through
-- vim.ui.select, `lantern/ask` requests, `lantern/event` notifications, verified
-- references handed straight to vim.lsp.util.locations_to_items and the quickfix list.
--
-- Run by tests/neovim/test_neovim.py as `nvim --headless --clean -l lantern_client.lua`.
-- Inputs come from the environment (LANTERN_TEST_*); everything observed is written
-- as JSON to LANTERN_TEST_OUT, where the Python test makes its assertions. Lua only
-- fails on its own when a step cannot run at all (the error is written too).

local env = vim.env
local out = { steps = {} }
local harness = dofile(vim.fs.dirname(arg[0]) .. '/harness.lua')
local wait = harness.wait

-- Prompts: the built-in handler calls vim.ui.select; answer with the next title queued.
local answers = {}
out.prompts = {}
vim.ui.select = function(items, opts, on_choice)
  local want = table.remove(answers, 1)
  local titles = {}
  local chosen = nil
  for _, item in ipairs(items) do
    table.insert(titles, item.title)
    if item.title == want then
      chosen = item
    end
  end
  table.insert(out.prompts, { prompt = opts.prompt, titles = titles, answered = want })
  on_choice(chosen)
end

local events = {}
local function run()
  local root = env.LANTERN_TEST_WORKSPACE
  vim.cmd.edit(vim.fn.fnameescape(root .. '/src/app.py'))
  local client_id = vim.lsp.start({
    name = 'lantern',
    cmd = { env.LANTERN_TEST_PYTHON, '-m', 'lantern.cli', 'serve' },
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = 'proj' } },
    handlers = {
      ['lantern/event'] = function(_, params)
        table.insert(events, params)
      end,
    },
  })
  assert(client_id, 'vim.lsp.start gave no client')
  local client = assert(vim.lsp.get_client_by_id(client_id))
  wait('initialize', function()
    return client.initialized
  end)
  out.offset_encoding = client.offset_encoding
  out.server_position_encoding = client.server_capabilities.positionEncoding

  local function cancelled_event(request_id)
    for _, event in ipairs(events) do
      if event.requestId == request_id and event.kind == 'status' and event.status == 'cancelled' then
        return true
      end
    end
    return false
  end

  -- One question: its result (or error) and the events that came with it. A cancelled
  -- request gets no reply in Neovim (the client drops it), so `on_sent` may say what
  -- else ends the wait.
  local function ask(question, answer_with, on_sent)
    answers = answer_with or {}
    local step = { question = question }
    local done = false
    local first_event = #events + 1
    local ok, request_id = client:request('lantern/ask', { question = question }, function(err, result)
      step.err = err
      step.result = result
      done = true
    end)
    assert(ok, 'request was not sent')
    step.request_id = request_id
    local finished = on_sent and on_sent(step, request_id)
    wait('an answer to ' .. question, function()
      return done or (finished ~= nil and finished())
    end)
    step.events = vim.list_slice(events, first_event)
    table.insert(out.steps, step)
    return step
  end

  -- 1. Allow a read; the answer cites a non-ASCII line and a missing file.
  local step = ask('Where is the greeting?', { 'Allow' })
  local refs = step.result.references
  -- What a user's :LanternAsk does: verified references (those with a uri) to quickfix.
  local verified = vim.tbl_filter(function(ref)
    return ref.uri ~= nil
  end, refs)
  local ok, items = pcall(vim.lsp.util.locations_to_items, verified, client.offset_encoding)
  step.locations_ok = ok
  if ok then
    vim.fn.setqflist({}, ' ', { title = 'Lantern', items = items })
    step.quickfix = harness.quickfix(vim.fn.getqflist())
  else
    step.locations_error = tostring(items)
  end
  -- Spans are in the negotiated encoding: with utf-8, byte offsets for string.sub.
  step.cited = vim.tbl_map(function(ref)
    return step.result.answer:sub(ref.span[1] + 1, ref.span[2])
  end, refs)

  -- 2. Deny a read.
  ask('What does the readme say?', { 'Deny' })

  -- 3. Cancel a question while the model is slow (its reply stalls halfway), then 4. ask the next one.
  ask('Slow one?', {}, function(cancelled, request_id)
    -- Its answer has begun to arrive, so the model was asked before the cancel.
    wait('the slow answer to start', function()
      for _, event in ipairs(events) do
        if event.requestId == request_id and event.kind == 'answerDelta' then
          return true
        end
      end
      return false
    end)
    cancelled.cancel_sent = client:cancel_request(request_id)
    return function()
      return cancelled_event(request_id)
    end
  end)
  ask('And the next one?', {})

  out.events_total = #events
  harness.stop(client)
end

harness.finish(run, out)
