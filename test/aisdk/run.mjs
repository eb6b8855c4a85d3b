// Runs one scenario of the AI SDK (ai v7) with ai-sdk-provider-claude-code
// driving the tack binary, and prints what came back as one JSON object.
//
//   node run.mjs SCENARIO
//
// TACK_BIN is the binary; the working directory is the session's. The fake
// Messages API is reached through ANTHROPIC_BASE_URL in the environment,
// which the Agent SDK passes on to tack. RESUME is a session id to resume.
import { generateText, streamText, Output, stepCountIs } from 'ai';
import { claudeCode } from 'ai-sdk-provider-claude-code';
import { z } from 'zod';

const scenario = process.argv[2];
const out = { scenario, permissionCalls: [], stderr: [] };

const base = {
  pathToClaudeCodeExecutable: process.env.TACK_BIN,
  cwd: process.cwd(),
  settingSources: [],
  stderr: (line) => out.stderr.push(line),
};

function meta(result) {
  const m = result.providerMetadata?.['claude-code'] ?? {};
  return { sessionId: m.sessionId, costUsd: m.costUsd, permissionDenials: m.permissionDenials };
}

async function run() {
  switch (scenario) {
    case 'generate': {
      const r = await generateText({ model: claudeCode('sonnet', base), prompt: 'Say hello' });
      Object.assign(out, { text: r.text, finishReason: r.finishReason, usage: r.usage }, meta(r));
      break;
    }
    case 'stream': {
      const r = streamText({ model: claudeCode('sonnet', { ...base, streamingInput: 'always' }), prompt: 'Count to three' });
      const chunks = [];
      for await (const c of r.textStream) chunks.push(c);
      Object.assign(out, { chunks, text: await r.text, finishReason: await r.finishReason }, meta({ providerMetadata: await r.providerMetadata }));
      break;
    }
    case 'tool': {
      const r = await generateText({
        model: claudeCode('sonnet', { ...base, allowedTools: ['Bash(echo *)'] }),
        prompt: 'Run echo for me',
      });
      Object.assign(out, { text: r.text }, meta(r));
      break;
    }
    case 'canUseTool': {
      const r = await generateText({
        model: claudeCode('sonnet', {
          ...base,
          canUseTool: async (toolName, input) => {
            out.permissionCalls.push({ toolName, input });
            return { behavior: 'deny', message: 'the test denies ' + toolName };
          },
        }),
        prompt: 'Write a file',
      });
      Object.assign(out, { text: r.text }, meta(r));
      break;
    }
    case 'resume': {
      const first = await generateText({ model: claudeCode('sonnet', base), prompt: 'Remember the word PELICAN' });
      const id = meta(first).sessionId;
      const second = await generateText({ model: claudeCode('sonnet', { ...base, resume: id }), prompt: 'Which word?' });
      Object.assign(out, { firstSessionId: id, text: second.text }, meta(second));
      break;
    }
    case 'structured': {
      const r = await generateText({
        model: claudeCode('sonnet', base),
        output: Output.object({ schema: z.object({ city: z.string(), population: z.number() }) }),
        prompt: 'Give me a city',
      });
      Object.assign(out, { object: r.output, text: r.text }, meta(r));
      break;
    }
    case 'maxTurns': {
      const r = await generateText({
        model: claudeCode('sonnet', { ...base, maxTurns: 1, allowedTools: ['Bash(echo *)'] }),
        prompt: 'Loop on echo',
        stopWhen: stepCountIs(1),
      });
      Object.assign(out, { text: r.text, finishReason: r.finishReason }, meta(r));
      break;
    }
    default:
      throw new Error('unknown scenario ' + scenario);
  }
}

try {
  await run();
} catch (e) {
  out.error = String(e?.message ?? e);
  out.errorData = e?.data ?? e?.cause?.message;
}
process.stdout.write(JSON.stringify(out) + '\n');
