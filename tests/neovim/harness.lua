-- What the headless scripts of this folder share: waiting with a deadline, stopping the
-- client, and writing what was observed (or the error that stopped the run) as JSON to
-- LANTERN_TEST_OUT, where the Python test makes its assertions.
-- Loaded with `dofile(vim.fs.dirname(arg[0]) .. '/harness.lua')`.

local M = {}
local WAIT_MS = tonumber(vim.env.LANTERN_TEST_WAIT_MS) or 15000

function M.wait(what, predicate)
  if not vim.wait(WAIT_MS, predicate, 20) then
    error('timed out waiting for ' .. what)
  end
end

function M.stop(client)
  client:stop()
  M.wait('the server to stop', function()
    return client:is_stopped()
  end)
end

-- Quickfix items as plain records (file name, not buffer number), for the JSON.
function M.quickfix(items)
  return vim.tbl_map(function(item)
    return {
      file = vim.api.nvim_buf_get_name(item.bufnr),
      lnum = item.lnum,
      col = item.col,
      end_lnum = item.end_lnum,
      end_col = item.end_col,
      text = item.text,
    }
  end, items)
end

-- Runs `run`, notes in `out` whether it finished (or its traceback), and saves `out`.
function M.finish(run, out)
  local ok, err = xpcall(run, debug.traceback)
  out.ok = ok
  out.error = (not ok) and tostring(err) or nil
  local file = assert(io.open(vim.env.LANTERN_TEST_OUT, 'w'))
  file:write(vim.json.encode(out))
  file:close()
end

return M
