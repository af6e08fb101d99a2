// The AI SDK's scripted model (ai/test), which the AI SDK and Mastra tests
// both drive their agents with.
import assert from "node:assert/strict";

import { MockLanguageModelV3 } from "ai/test";

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

/** A model that asks for one tool call, then says "done" after reading its result. */
export function scriptedModel(toolName, input) {
  return new MockLanguageModelV3({
    doGenerate: [
      {
        content: [{ type: "tool-call", toolCallId: "call-1", toolName, input: JSON.stringify(input) }],
        finishReason: { unified: "tool-calls", raw: "tool_calls" },
        usage,
        warnings: [],
      },
      { content: [{ type: "text", text: "done" }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] },
    ],
  });
}

/** What the model was sent back about its tool call, in its second turn. */
export function toolResultSent(model) {
  const second = model.doGenerateCalls[1];
  assert.ok(second, "the model was not called again with the tool's result");
  const results = second.prompt.filter((m) => m.role === "tool").flatMap((m) => m.content);
  assert.equal(results.length, 1, JSON.stringify(second.prompt));
  return results[0].output;
}
