// A scripted model server on loopback, standing in for the Anthropic,
// OpenAI and Gemini APIs the real clients call. It has no dependencies
// (node:http) because Node is already what installs and runs the clients.
//
// Each conversation follows one script: the first request that offers the
// runtime's shell tool is answered with a call of that tool; a request that
// carries a tool's result is answered with a final text; any other request
// (titles, summaries, warm-ups) gets a short text. Every request is logged,
// body and all, so a test can tell whether a secret reached the model.
import http from 'node:http';

export async function startModelServer(script) {
  const requests = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      requests.push({ method: req.method, url: req.url, body: raw });
      let body = {};
      try {
        body = raw ? JSON.parse(raw) : {};
      } catch {
        // Logged above; answered as a side request below.
      }
      const issued = script.issued || 0;
      try {
        route(req, res, body, script);
        if ((script.issued || 0) > issued) script.issuedAt = requests.length - 1;
      } catch (err) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: String(err) } }));
      }
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    // sawText says whether any request body holds text, as sent (JSON
    // escaping aside: the canaries are plain ASCII words).
    sawText: (text) => requests.some((r) => r.body.includes(text)),
    // sawTextOnlyAfterCall says whether text reached the model only after
    // its tool call, so through the tool's result and not, say, a file the
    // client put in its context on its own.
    sawTextOnlyAfterCall: (text) =>
      script.issuedAt !== undefined &&
      !requests.slice(0, script.issuedAt + 1).some((r) => r.body.includes(text)) &&
      requests.slice(script.issuedAt + 1).some((r) => r.body.includes(text)),
    // toolCalls counts the tool calls the server handed out.
    get toolCalls() {
      return script.issued || 0;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.();
        server.close(resolve);
      }),
  };
}

function route(req, res, body, script) {
  const url = new URL(req.url, 'http://x');
  const p = url.pathname;
  if (req.method === 'GET' && /\/models\/?$/.test(p)) {
    return json(res, { object: 'list', data: [], models: [] });
  }
  if (req.method !== 'POST') return json(res, {}, 404);
  if (p.endsWith('/messages')) return anthropic(res, body, script);
  if (p.endsWith('/responses')) return responses(res, body, script);
  if (p.endsWith('/chat/completions')) return chat(res, body, script);
  if (p.includes(':streamGenerateContent')) return gemini(res, body, script, true);
  if (p.includes(':generateContent')) return gemini(res, body, script, false);
  if (p.includes(':countTokens')) return json(res, { totalTokens: 1 });
  if (p.endsWith('/count_tokens')) return json(res, { input_tokens: 1 });
  return json(res, { error: { message: `scripted model server: no route for ${p}` } }, 404);
}

// decide returns the turn's next move: a tool call, or text.
function decide(script, offersTool, hasResult) {
  if (hasResult) return { text: script.finalText || 'Done.' };
  if (offersTool && !script.issued) {
    script.issued = (script.issued || 0) + 1;
    return { tool: script.tool };
  }
  if (offersTool) {
    // A second turn without a result of ours means the client dropped the
    // call before running it (a hook's deny is sent back as a result, so
    // this is rare); answer text so the client ends.
    return { text: script.finalText || 'Done.' };
  }
  return { text: 'OK' };
}

// Anthropic Messages (Claude Code, Copilot CLI with COPILOT_PROVIDER_TYPE=anthropic).
function anthropic(res, body, script) {
  const tools = (body.tools || []).map((t) => t.name);
  const msgs = body.messages || [];
  const last = msgs[msgs.length - 1];
  const hasResult =
    last && Array.isArray(last.content) && last.content.some((c) => c && c.type === 'tool_result');
  const move = decide(script, tools.includes(script.tool.name), hasResult);
  const id = `msg_${Date.now()}`;
  const model = body.model || 'scripted';
  const block = move.tool
    ? { type: 'tool_use', id: `toolu_${Date.now()}`, name: move.tool.name, input: move.tool.input }
    : { type: 'text', text: move.text };
  const stop = move.tool ? 'tool_use' : 'end_turn';
  const usage = { input_tokens: 10, output_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  if (!body.stream) {
    return json(res, { id, type: 'message', role: 'assistant', model, content: [block], stop_reason: stop, stop_sequence: null, usage });
  }
  const sse = startSSE(res);
  sse({ type: 'message_start', message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage } }, 'message_start');
  if (move.tool) {
    sse({ type: 'content_block_start', index: 0, content_block: { ...block, input: {} } }, 'content_block_start');
    sse({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(move.tool.input) } }, 'content_block_delta');
  } else {
    sse({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, 'content_block_start');
    sse({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: move.text } }, 'content_block_delta');
  }
  sse({ type: 'content_block_stop', index: 0 }, 'content_block_stop');
  sse({ type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 10 } }, 'message_delta');
  sse({ type: 'message_stop' }, 'message_stop');
  res.end();
}

// OpenAI Responses (Codex).
function responses(res, body, script) {
  const tools = (body.tools || []).map((t) => t.name || (t.function && t.function.name));
  const input = Array.isArray(body.input) ? body.input : [];
  const hasResult = input.some((i) => i && /_call_output$/.test(i.type || ''));
  const move = decide(script, tools.includes(script.tool.name), hasResult);
  const id = `resp_${Date.now()}`;
  const item = move.tool
    ? { type: 'function_call', id: `fc_${Date.now()}`, call_id: `call_${Date.now()}`, name: move.tool.name, arguments: JSON.stringify(move.tool.input), status: 'completed' }
    : { type: 'message', id: `msg_${Date.now()}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: move.text, annotations: [] }] };
  const usage = { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 10, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 20 };
  const response = (status, output) => ({ id, object: 'response', created_at: Math.floor(Date.now() / 1000), status, model: body.model || 'scripted', output, usage: status === 'completed' ? usage : null });
  if (!body.stream) return json(res, response('completed', [item]));
  const sse = startSSE(res);
  let seq = 0;
  const ev = (type, data) => sse({ type, sequence_number: seq++, ...data }, type);
  ev('response.created', { response: response('in_progress', []) });
  ev('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress' } });
  if (!move.tool) {
    ev('response.output_text.delta', { item_id: item.id, output_index: 0, content_index: 0, delta: move.text });
  }
  ev('response.output_item.done', { output_index: 0, item });
  ev('response.completed', { response: response('completed', [item]) });
  res.end();
}

// OpenAI Chat Completions (OpenCode through @ai-sdk/openai-compatible).
function chat(res, body, script) {
  const tools = (body.tools || []).map((t) => t.function && t.function.name);
  const msgs = body.messages || [];
  const hasResult = msgs.length > 0 && msgs[msgs.length - 1].role === 'tool';
  const move = decide(script, tools.includes(script.tool.name), hasResult);
  const id = `chatcmpl_${Date.now()}`;
  const created = Math.floor(Date.now() / 1000);
  const model = body.model || 'scripted';
  const call = move.tool && { index: 0, id: `call_${Date.now()}`, type: 'function', function: { name: move.tool.name, arguments: JSON.stringify(move.tool.input) } };
  const finish = move.tool ? 'tool_calls' : 'stop';
  const usage = { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 };
  if (!body.stream) {
    const message = move.tool ? { role: 'assistant', content: null, tool_calls: [call] } : { role: 'assistant', content: move.text };
    return json(res, { id, object: 'chat.completion', created, model, choices: [{ index: 0, message, finish_reason: finish }], usage });
  }
  const sse = startSSE(res);
  const chunk = (delta, finish_reason, extra = {}) => sse({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason }], ...extra });
  chunk(move.tool ? { role: 'assistant', tool_calls: [call] } : { role: 'assistant', content: move.text }, null);
  chunk({}, finish, { usage });
  res.write('data: [DONE]\n\n');
  res.end();
}

// Gemini generateContent and streamGenerateContent?alt=sse (Gemini CLI).
function gemini(res, body, script, stream) {
  const tools = (body.tools || []).flatMap((t) => (t.functionDeclarations || []).map((f) => f.name));
  const contents = body.contents || [];
  const last = contents[contents.length - 1];
  const hasResult = !!(last && (last.parts || []).some((p) => p.functionResponse));
  const move = decide(script, tools.includes(script.tool.name), hasResult);
  const part = move.tool ? { functionCall: { name: move.tool.name, args: move.tool.input } } : { text: move.text };
  const reply = {
    candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 10, totalTokenCount: 20 },
    modelVersion: 'scripted',
  };
  if (!stream) return json(res, reply);
  const sse = startSSE(res);
  sse(reply);
  res.end();
}

function startSSE(res) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  return (data, event) => {
    if (event) res.write(`event: ${event}\n`);
    res.write(`data: ${JSON.stringify(data)}\n\n`);
  };
}

function json(res, obj, status = 200) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(obj));
}
