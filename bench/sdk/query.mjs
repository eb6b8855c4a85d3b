// Times the official Agent SDK's query() for one single-turn prompt, from the
// call to the result message, with the CLI given as argv[2], RUNS times.
// Prints one JSON line: {"cli", "runs", "ms": [...]}.
import { query } from '../../test/sdk/node_modules/@anthropic-ai/claude-agent-sdk/sdk.mjs';

const cli = process.argv[2];
const runs = Number(process.env.RUNS || 15);
const ms = [];
for (let i = 0; i < runs + 1; i++) {
  const start = performance.now();
  let ok = false;
  for await (const m of query({
    prompt: 'say hi',
    options: { pathToClaudeCodeExecutable: cli, cwd: process.cwd(), settingSources: [], persistSession: false },
  })) {
    if (m.type === 'result') ok = !m.is_error;
  }
  if (!ok) throw new Error(`${cli}: the query did not succeed`);
  if (i > 0) ms.push(performance.now() - start); // the first run warms the page cache
}
process.stdout.write(JSON.stringify({ cli, runs, ms }) + '\n');
