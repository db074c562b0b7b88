-- wrk script for bench/serve/sse_throughput.sh: every request is a streaming chat completion.
-- SSE_MAX_TOKENS (environment) sets the output length; ignore_eos makes it exact.
local max_tokens = os.getenv("SSE_MAX_TOKENS") or "256"
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"model":"inferscope-sim-8b","messages":[{"role":"user","content":"benchmark"}],' ..
           '"max_tokens":' .. max_tokens .. ',"ignore_eos":true,"stream":true}'
